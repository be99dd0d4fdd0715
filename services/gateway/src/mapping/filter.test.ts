import { checkFilter, compileFilter } from '../domain/filter';
import { filterToWire } from './filter';

const text = (value: string) => ({ kind: { $case: 'text' as const, value } });

describe('filterToWire', () => {
  it('is absent without a filter', () => {
    expect(filterToWire(null)).toBeUndefined();
  });

  it('carries every node kind of a checked filter, times in ms', () => {
    const checked = checkFilter(
      compileFilter(
        {
          filter: { op: 'or', conds: [{ op: 'range', field: 'level', gte: 0, lt: '2' }, { op: 'prefix', field: 'uri', prefix: 'viking://resources/' }, { op: 'must_not', field: 'category', conds: [true, 3] }] },
          contextType: 'memory,skill',
          since: '2026-07-01',
          tags: ['env=prod'],
        },
        Date.UTC(2026, 6, 14),
      ),
    );
    expect(filterToWire(checked)).toEqual({
      node: {
        $case: 'allOf',
        value: {
          conds: [
            {
              node: {
                $case: 'anyOf',
                value: {
                  conds: [
                    { node: { $case: 'range', value: { field: 'level', gte: 0, gt: undefined, lte: undefined, lt: 2 } } },
                    { node: { $case: 'prefix', value: { field: 'uri', prefix: 'viking://resources/' } } },
                    { node: { $case: 'mustNot', value: { field: 'category', values: [{ kind: { $case: 'flag', value: true } }, { kind: { $case: 'number', value: 3 } }] } } },
                  ],
                },
              },
            },
            { node: { $case: 'must', value: { field: 'context_type', values: [text('memory'), text('skill')] } } },
            { node: { $case: 'timeRange', value: { field: 'updated_at', gteMs: Date.parse('2026-07-01T00:00:00.000Z'), gtMs: undefined, lteMs: undefined, ltMs: undefined } } },
            { node: { $case: 'must', value: { field: 'search_tags', values: [text('env=prod')] } } },
          ],
        },
      },
    });
  });
});
