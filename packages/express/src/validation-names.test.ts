import { rateLimit as erlRateLimit } from 'express-rate-limit';
import { VALIDATION_NAMES } from './validation-names.js';

describe('VALIDATION_NAMES', () => {
  it("are express-rate-limit's check names, in the order its ERR_ERL_UNKNOWN_VALIDATION message lists them", () => {
    const messages: string[] = [];
    const log = (error: unknown) => messages.push((error as Error).message);
    erlRateLimit({ validate: { nope: true } as never, logger: { error: log, warn: log } });
    expect(messages.join('\n')).toContain(`Supported validate options are: ${[...VALIDATION_NAMES, 'default'].join(', ')}.`);
  });
});
