export * from './base-load.ts';
export * from './common.ts';
export * from './offline.ts';
export * from './phase.ts';
export * from './solar.ts';
export * from './unusual-consumption.ts';
