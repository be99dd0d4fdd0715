export { createServer, handlers } from './server';
export { loadBudgetRenderConfig } from './config';
export { startBudgetRender } from './start';
export { main } from './main';
export { trimToBudget } from './domain/trim';
