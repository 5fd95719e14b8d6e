import { decodeMessage, encodeMessage, FORMAT_VERSION, type SyncMessage } from './codec.js';

describe('the sync message codec', () => {
  describe('a message with hostile keys', () => {
    const message: SyncMessage = {
      node: 'node-a',
      seq: 7,
      entries: [
        { namespace: 'api', key: 'a\u0000b"\\\n{}', limitId: 'fixed-window:2:1000:2:continuous:1000:', windows: [1_700_000_000_000, 1_700_000_001_000, 2] },
        { namespace: '', key: '\ud800 lone surrogate', limitId: 'sliding-window:x', windows: [0, 2_000, -1.5, 1_000, 3_000, 0.25] },
      ],
    };

    it('survives the round trip unchanged', () => {
      expect(decodeMessage(encodeMessage(message))).toEqual(message);
    });

    it('is JSON carrying the format version, the node id and the sequence number', () => {
      expect(JSON.parse(encodeMessage(message))).toMatchObject({ v: FORMAT_VERSION, n: 'node-a', s: 7 });
    });
  });

  describe('malformed input', () => {
    const valid = { v: 1, n: 'x', s: 1, d: [['ns', 'k', 'id', [0, 1_000, 1]]] };
    it.each([
      ['not JSON', '{', /not JSON/],
      ['an array', '[]', /not an object/],
      ['another version', JSON.stringify({ ...valid, v: 2 }), /unknown format version 2/],
      ['no node id', JSON.stringify({ ...valid, n: '' }), /no node id/],
      ['a sequence number of 0', JSON.stringify({ ...valid, s: 0 }), /bad sequence number/],
      ['no rows', JSON.stringify({ ...valid, d: 'x' }), /no delta rows/],
      ['a short row', JSON.stringify({ ...valid, d: [['ns', 'k', [0, 1, 1]]] }), /row 0 is not/],
      ['a numeric key', JSON.stringify({ ...valid, d: [['ns', 5, 'id', [0, 1, 1]]] }), /must be strings/],
      ['windows not in triples', JSON.stringify({ ...valid, d: [['ns', 'k', 'id', [0, 1]]] }), /triples/],
      ['a non-numeric delta', JSON.stringify({ ...valid, d: [['ns', 'k', 'id', [0, 1, '1']]] }), /finite numbers/],
    ])('rejects %s, saying what is wrong', (_, text, reason) => {
      expect(() => decodeMessage(text)).toThrow(reason);
    });

    it('accepts the well-formed message these were made from', () => {
      expect(decodeMessage(JSON.stringify(valid)).entries).toHaveLength(1);
    });
  });
});
