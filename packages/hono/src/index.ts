/**
 * @ratekit/hono: Hono 4 middleware for ratekit.
 *
 * @module
 */
export {};
