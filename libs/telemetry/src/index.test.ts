import { addBackgroundWork, indexBackgroundRows, registry } from './index';

async function series(): Promise<Record<string, number>> {
  const m = await indexBackgroundRows.get();
  return Object.fromEntries(m.values.map((v) => [String(v.labels.work), v.value]));
}

describe('ctxmesh_index_background_rows', () => {
  it('has no series while no index reports, sums the reporting indexes, and forgets one that stops', async () => {
    expect(await series()).toEqual({});
    const stopA = addBackgroundWork(() => ({ ann: 120, lexical: 3 }));
    const stopB = addBackgroundWork(() => ({ lexical: 4 }));
    try {
      expect(await series()).toEqual({ ann: 120, lexical: 7 });
      stopA();
      expect(await series()).toEqual({ ann: 0, lexical: 4 });
      expect(await registry.getSingleMetricAsString('ctxmesh_index_background_rows')).toContain('ctxmesh_index_background_rows{work="lexical"} 4');
    } finally {
      stopA();
      stopB();
    }
    expect(await series()).toEqual({});
  });

  it('counts nothing for an index whose reader throws (closed)', async () => {
    const stopA = addBackgroundWork(() => {
      throw new Error('index closed');
    });
    const stopB = addBackgroundWork(() => ({ ann: 2 }));
    try {
      expect(await series()).toEqual({ ann: 2, lexical: 0 });
    } finally {
      stopA();
      stopB();
    }
  });
});
