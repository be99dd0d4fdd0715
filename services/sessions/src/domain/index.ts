/** The sessions domain: pure logic over the session log (overflow-recovery §3). */
export * from './errors';
export * from './events';
export * from './text';
export * from './tokens';
export * from './classify';
export * from './projection';
export * from './ranges';
export * from './transaction';
export * from './append-plan';
export * from './compress-plan';
export * from './recovery';
export * from './search';
export * from './decompress';
export * from './config';
export * from './session-log';
export * from './capture';
export * from './workspaces';
