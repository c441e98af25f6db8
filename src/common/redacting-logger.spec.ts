import { RedactingLogger } from './redacting-logger';

describe('RedactingLogger', () => {
  let written: string[];
  let spies: jest.SpyInstance[];
  beforeEach(() => {
    written = [];
    const capture = (chunk: unknown) => {
      written.push(String(chunk));
      return true;
    };
    spies = [
      jest.spyOn(process.stdout, 'write').mockImplementation(capture),
      jest.spyOn(process.stderr, 'write').mockImplementation(capture),
    ];
  });
  afterEach(() => spies.forEach((s) => s.mockRestore()));

  it('redacts keys from messages and stacks', () => {
    const logger = new RedactingLogger({ logLevels: ['error', 'log'] });
    logger.log('GET /projections/p/stream?apiKey=secret-key-0123456789 took 3 ms', 'Test');
    logger.error('failed for x-api-key: secret-key-0123456789', 'Error: boom\n    at /events?apiKey=secret-key-0123456789', 'Test');
    const out = written.join('');
    expect(out).toContain('apiKey=[REDACTED]');
    expect(out).not.toContain('secret-key-0123456789');
  });

  it('takes an error without a stack (Nest passes undefined through)', () => {
    const logger = new RedactingLogger({ logLevels: ['error'] });
    expect(() => logger.error('no stack here', undefined)).not.toThrow();
    expect(written.join('')).toContain('no stack here');
  });
});
