export * from './uri';
