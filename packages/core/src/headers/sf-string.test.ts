import { parseItem } from 'structured-headers';
import { RateKitOptionError } from '../errors';
import { assertPolicyName, isSfStringSafe, sfString } from './sf-string';

describe('sfString', () => {
  describe('given printable ASCII', () => {
    // [name, sf-string]
    it.each([
      ['100-in-15min', '"100-in-15min"'],
      ['burst', '"burst"'],
      ['say "hi"', '"say \\"hi\\""'],
      ['back\\slash', '"back\\\\slash"'],
      ['"\\"', '"\\"\\\\\\""'],
      [' spaced out ', '" spaced out "'],
      ["~!#$%&'()*+,-./:;<=>?@[]^_`{|}", '"~!#$%&\'()*+,-./:;<=>?@[]^_`{|}"'],
    ])('quotes %p as %s', (name, expected) => {
      expect(sfString(name)).toBe(expected);
    });

    it.each(['plain', 'say "hi"', 'a\\b', '"', '\\'])('writes %p so that an RFC 9651 parser reads the same name back', (name) => {
      const [value] = parseItem(sfString(name));
      expect(value).toBe(name);
    });
  });

  describe('given a character outside 0x20-0x7E', () => {
    it.each([['café'], ['tab\there'], ['line\nbreak'], ['del\u007f'], ['nul\u0000'], ['emoji 🚦']])('rejects %p with a coded error', (name) => {
      expect(() => sfString(name)).toThrow(RateKitOptionError);
      expect(() => sfString(name)).toThrow(/printable ASCII/);
    });
  });

  it('rejects the empty name', () => {
    expect(() => sfString('')).toThrow(RateKitOptionError);
  });
});

describe('assertPolicyName', () => {
  it('names the option, what was expected and what was given', () => {
    expect(() => assertPolicyName('limits[1].name', 'naïve')).toThrow(
      'Expected `limits[1].name` to be a non-empty string of printable ASCII (0x20-0x7E), usable as a RateLimit policy name, got "naïve"',
    );
  });

  it.each([[7], [undefined], [null]])('rejects the non-string %p', (name) => {
    expect(() => assertPolicyName('name', name)).toThrow(RateKitOptionError);
  });

  it('accepts quotes and backslashes, which are escaped when sent', () => {
    expect(() => assertPolicyName('name', 'a"b\\c')).not.toThrow();
  });
});

describe('isSfStringSafe', () => {
  it('accepts exactly 0x20 to 0x7E', () => {
    expect(isSfStringSafe('\u0020\u007e')).toBe(true);
    expect(isSfStringSafe('\u001f')).toBe(false);
    expect(isSfStringSafe('\u007f')).toBe(false);
    expect(isSfStringSafe('\u00e9')).toBe(false);
  });
});
