/**
 * The tier / budget / render kernel (context-contract §4, §5, §6, §8.2): pure functions,
 * no I/O. Callers read bodies themselves (see {@link planReads}) and hand the texts back.
 */
export * from './python';
export * from './tokens';
export * from './tiers';
export * from './overview';
export * from './render';
export * from './plan';
export * from './digest';
export * from './packing';
export * from './pricing';
export * from './evidence';
export * from './compact';
export * from './excerpt';
export * from './assemble';
