// LLM agents through LangChain: a proposer that writes tasks and a solver under evaluation.
export * from './config.js';
export * from './model.js';
export * from './prompts.js';
export * from './proposer.js';
export * from './solver.js';
