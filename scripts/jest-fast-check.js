// fast-check's seed for every property of a test file (jest `setupFilesAfterEnv`): a fixed one
// in `npm test`, so that a run is reproducible and a newcomer's run cannot fail on a seed nobody
// has seen; a random one under `npm run test:props` (CTXMESH_PROPS_SEED=random); or a given one
// to replay a failure (CTXMESH_PROPS_SEED=<seed>; fast-check prints the seed of every failure).
// A property that passes its own `seed` keeps it.
const fc = require('fast-check');

const FIXED_SEED = 20261204;
const env = process.env.CTXMESH_PROPS_SEED;
if (env !== 'random') {
  const seed = env !== undefined && env !== '' ? Number(env) : FIXED_SEED;
  if (!Number.isInteger(seed)) throw new Error(`CTXMESH_PROPS_SEED must be an integer or "random", got ${JSON.stringify(env)}`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
}
