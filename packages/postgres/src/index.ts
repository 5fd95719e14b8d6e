/**
 * @ratekit/postgres: a ratekit store on PostgreSQL. Every decision, with any
 * algorithm and any number of limits, is one statement (a PL/pgSQL function
 * call) on the database clock, atomic under concurrent transactions.
 *
 * @module
 */
export { postgresStore } from './store.js';
export type { PgQueryable, PgQueryConfig, PostgresStore, PostgresStoreOptions } from './store.js';
export { dropSchemaSql, schemaNames, schemaSql } from './schema.js';
export type { SchemaNames, SchemaOptions } from './schema.js';
