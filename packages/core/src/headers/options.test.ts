import { RateKitOptionError } from '../errors';
import { type HeaderOptionsInput, resolveHeaderOptions } from './options';

describe('resolveHeaderOptions', () => {
  describe('given nothing', () => {
    it("fills in express-rate-limit's defaults", () => {
      const options = resolveHeaderOptions();
      expect(options).toEqual({
        standardHeaders: false,
        legacyHeaders: true,
        legacyReset: 'epoch',
        retryAfter: undefined,
        style: 'express-rate-limit',
        combineLists: false,
      });
      expect(Object.isFrozen(options)).toBe(true);
    });
  });

  describe('given standardHeaders: true', () => {
    it("reads it as 'draft-6', as express-rate-limit does", () => {
      expect(resolveHeaderOptions({ standardHeaders: true }).standardHeaders).toBe('draft-6');
    });
  });

  it.each(['draft-6', 'draft-7', 'draft-8', 'draft-9', 'draft-10', 'draft-11', false] as const)('accepts standardHeaders %p', (draft) => {
    expect(resolveHeaderOptions({ standardHeaders: draft }).standardHeaders).toBe(draft);
  });

  describe('given a bad option', () => {
    // [the input, the option named, what "got" shows]
    it.each<[unknown, string, string]>([
      [{ standardHeaders: 'draft-12' }, 'standardHeaders', 'got "draft-12"'],
      [{ standardHeaders: 'draft6' }, 'standardHeaders', 'got "draft6"'],
      [{ legacyHeaders: 'yes' }, 'legacyHeaders', 'got "yes"'],
      [{ legacyReset: 'seconds' }, 'legacyReset', 'got "seconds"'],
      [{ retryAfter: 30 }, 'retryAfter', 'got 30'],
      [{ style: 'compact' }, 'style', 'got "compact"'],
      [{ combineLists: 1 }, 'combineLists', 'got 1'],
      [null, 'options', 'got null'],
    ])('rejects %j naming %s', (input, option, got) => {
      const build = () => resolveHeaderOptions(input as HeaderOptionsInput);
      expect(build).toThrow(RateKitOptionError);
      expect(build).toThrow(`\`${option}\``);
      expect(build).toThrow(got);
    });

    it('names the option under the given path', () => {
      expect(() => resolveHeaderOptions({ legacyReset: 'x' as never }, 'headers')).toThrow('Expected `headers.legacyReset` to be one of');
    });
  });
});
