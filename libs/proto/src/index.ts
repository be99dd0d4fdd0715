/**
 * @ctxmesh/proto: the generated contracts (src/gen, DO NOT EDIT) re-exported by package.
 */
export * as common from './gen/ctxmesh/common/v1/common';
export * as status from './gen/ctxmesh/common/v1/status';
export * as gather from './gen/ctxmesh/gather/v1/gather';
export * as tierReader from './gen/ctxmesh/tier_reader/v1/tier_reader';
export * as budgetRender from './gen/ctxmesh/budget_render/v1/budget_render';
export * as ledger from './gen/ctxmesh/ledger/v1/ledger';
export * as rewrite from './gen/ctxmesh/rewrite/v1/rewrite';
export * as sessions from './gen/ctxmesh/sessions/v1/sessions';
export * as indexer from './gen/ctxmesh/indexer/v1/indexer';
export * as orchestrator from './gen/ctxmesh/orchestrator/v1/orchestrator';
