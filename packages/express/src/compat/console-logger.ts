import type { Logger } from '../types.js';

/**
 * express-rate-limit's default `logger`: the console, with the message first
 * when there is one (`console.error(message, error)`), else the error alone.
 */
export const ConsoleLogger: Logger = {
  warn: (error, message) => (message === undefined ? console.warn(error) : console.warn(message, error)),
  error: (error, message) => (message === undefined ? console.error(error) : console.error(message, error)),
};
