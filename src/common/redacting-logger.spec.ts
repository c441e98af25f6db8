import { LineLogger, RedactingLogger } from './redacting-logger';

function recorder(): { lines: LineLogger; written: { level: string; fields: object; msg?: string }[] } {
  const written: { level: string; fields: object; msg?: string }[] = [];
  const at = (level: string) => (fields: object, msg?: string) => void written.push({ level, fields, msg });
  return {
    lines: { fatal: at('fatal'), error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), trace: at('trace') },
    written,
  };
}

describe('RedactingLogger', () => {
  it('writes Nest messages as lines with their context as a field, log as info and verbose as trace', () => {
    const { lines, written } = recorder();
    const logger = new RedactingLogger(lines);
    logger.log('listening', 'Main');
    logger.verbose('detail', 'Lanes');
    logger.warn('plain');
    expect(written).toEqual([
      { level: 'info', fields: { context: 'Main' }, msg: 'listening' },
      { level: 'trace', fields: { context: 'Lanes' }, msg: 'detail' },
      { level: 'warn', fields: {}, msg: 'plain' },
    ]);
  });

  it('takes an error with a stack, without one (Nest passes undefined through), and an Error as the message', () => {
    const { lines, written } = recorder();
    const logger = new RedactingLogger(lines);
    logger.error('failed', 'Error: boom\n    at x', 'Errors');
    logger.error('no stack here', undefined, 'Errors');
    logger.error(new Error('thrown'));
    expect(written[0]).toEqual({ level: 'error', fields: { context: 'Errors', stack: 'Error: boom\n    at x' }, msg: 'failed' });
    expect(written[1]).toEqual({ level: 'error', fields: { context: 'Errors' }, msg: 'no stack here' });
    expect(written[2]).toMatchObject({ level: 'error', fields: { stack: expect.stringContaining('Error: thrown') }, msg: 'thrown' });
  });
});
