export { POLISH_HOLIDAYS } from './analytics/tariffs.ts';
export { type BuildAppOptions, buildApp } from './app.ts';
export { type AppConfig, configFromEnv, defaultConfig } from './config.ts';
export { createPgliteSql, createPostgresSql, type Sql } from './db/sql.ts';
export { type DemoAccount, type DemoDevice, ensureDemoAccount } from './demo.ts';
