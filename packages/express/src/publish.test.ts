import type { Request } from 'express';
import { publishInfo } from './publish.js';

describe('publishInfo', () => {
  it("sets req[name] to the info, with express-rate-limit's hidden, read-only current", () => {
    const req = {} as Request;
    const info = { limit: 5, used: 2, remaining: 3 };
    expect(publishInfo(req, 'rateLimit', info, 2)).toBe(info);
    expect((req as unknown as Record<string, unknown>)['rateLimit']).toBe(info);
    expect(Object.getOwnPropertyDescriptor(info, 'current')).toEqual({ value: 2, enumerable: false, writable: false, configurable: false });
    expect(Object.keys(info)).toEqual(['limit', 'used', 'remaining']);
    expect(JSON.stringify(info)).toBe('{"limit":5,"used":2,"remaining":3}');
  });

  it('uses the name it is given (requestPropertyName)', () => {
    const req = {} as Request;
    publishInfo(req, 'quota', { limit: 1 }, 1);
    expect(Object.keys(req)).toEqual(['quota']);
  });
});
