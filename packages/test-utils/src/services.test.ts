import { findBinary, inCI, serviceSource, type ServiceDefinition } from './services.js';

const fake: ServiceDefinition = {
  name: 'Fake',
  envVar: 'RATEKIT_TEST_FAKE_URL',
  binary: 'ratekit-no-such-server',
  fallbackDirs: [],
  start: () => Promise.reject(new Error('never started')),
};

function withEnv(vars: Record<string, string | undefined>, body: () => void): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('serviceSource', () => {
  describe('when the environment variable is set', () => {
    it('uses the server it names', () => {
      withEnv({ RATEKIT_TEST_FAKE_URL: 'fake://somewhere' }, () => {
        expect(serviceSource(fake)).toEqual({ kind: 'env', url: 'fake://somewhere' });
      });
    });
  });

  describe('when it is unset and the binary is on the machine', () => {
    it('starts one from the binary found', () => {
      withEnv({ RATEKIT_TEST_FAKE_URL: undefined }, () => {
        expect(serviceSource({ ...fake, binary: 'sh', fallbackDirs: ['/bin', '/usr/bin'] })).toMatchObject({ kind: 'binary', path: expect.stringMatching(/\/sh$/) });
      });
    });
  });

  describe('when the binary is there but a companion it needs is not', () => {
    it('says the service is missing, naming the companion', () => {
      withEnv({ RATEKIT_TEST_FAKE_URL: undefined }, () => {
        expect(serviceSource({ ...fake, binary: 'sh', companions: ['ratekit-no-such-cli'], fallbackDirs: ['/bin', '/usr/bin'] })).toEqual({
          kind: 'missing',
          reason: 'RATEKIT_TEST_FAKE_URL is unset and `ratekit-no-such-cli` was not found on PATH',
        });
      });
    });
  });

  describe('when neither is there', () => {
    it('says why, naming the variable and the binary', () => {
      withEnv({ RATEKIT_TEST_FAKE_URL: undefined }, () => {
        expect(serviceSource(fake)).toEqual({ kind: 'missing', reason: 'RATEKIT_TEST_FAKE_URL is unset and `ratekit-no-such-server` was not found on PATH' });
      });
    });
  });
});

describe('inCI', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['0', false],
    ['false', false],
    ['true', true],
    ['1', true],
  ])('CI=%p → %p', (value, expected) => {
    withEnv({ CI: value }, () => expect(inCI()).toBe(expected));
  });
});

describe('findBinary', () => {
  it('checks an absolute path as it is', () => {
    expect(findBinary('/bin/sh')).toBe('/bin/sh');
    expect(findBinary('/nonexistent/ratekit-server')).toBeUndefined();
  });
});
