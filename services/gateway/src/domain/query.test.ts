import { envelopeOf } from '../mapping/envelope';
import { RequestValidationError } from './errors';
import { boolQuery, requiredQuery, validatedIntQuery } from './query';
import { thrownBy } from '@ctxmesh/testing';

describe('requiredQuery and boolQuery', () => {
  it('reports a missing parameter at ["query", name]', () => {
    const e = thrownBy(() => requiredQuery({}, 'uri')) as RequestValidationError;
    expect(envelopeOf(e).error.details.validation_errors).toEqual([{ loc: ['query', 'uri'], message: 'Field required', type: 'missing' }]);
    expect(requiredQuery({ uri: ['a', 'b'] }, 'uri')).toBe('b');
  });

  it('reads booleans laxly', () => {
    expect(boolQuery({ wait: 'true' }, 'wait', false)).toBe(true);
    expect(boolQuery({ wait: '0' }, 'wait', true)).toBe(false);
    expect(boolQuery({}, 'wait', true)).toBe(true);
    expect(thrownBy(() => boolQuery({ wait: 'maybe' }, 'wait', false))).toBeInstanceOf(RequestValidationError);
  });
});

describe('validatedIntQuery', () => {
  it('reads an integer as a body field would, at ["query", name]', () => {
    expect(validatedIntQuery({ preserve_recent: '5' }, 'preserve_recent')).toBe(5);
    expect(validatedIntQuery({}, 'preserve_recent')).toBeUndefined();
    const e = thrownBy(() => validatedIntQuery({ preserve_recent: 'x' }, 'preserve_recent')) as RequestValidationError;
    expect(e.issues).toEqual([{ loc: ['query', 'preserve_recent'], msg: 'Input should be a valid integer, unable to parse string as an integer', type: 'int_parsing' }]);
  });
});
