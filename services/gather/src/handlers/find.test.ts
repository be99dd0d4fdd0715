import { toWireHit } from './find';

describe('toWireHit', () => {
  it('puts a node hit on the wire as a whole node (doc_uri empty)', () => {
    expect(
      toWireHit({ uri: 'viking://resources/a.md', contextType: 'resource', level: 2, score: 0.7, abstract: 'abs', overview: 'ov', tags: ['k=v'], category: 'resources' }),
    ).toEqual({ contextType: 'resource', uri: 'viking://resources/a.md', level: 2, score: 0.7, abstract: 'abs', tags: ['k=v'], category: 'resources', docUri: '', overview: 'ov' });
  });
});
