import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError } from '../common/domain-error';

/**
 * An import's body goes to a temporary file first (never into memory): the store's one import
 * transaction then runs from disk at disk speed, not at the client's (on SQLite it holds the
 * database's write lock: a slow upload must not). Over `maxBytes` → 413 PAYLOAD_TOO_LARGE.
 */
export async function spoolBody<T>(body: Readable, maxBytes: number, use: (file: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-import-'));
  const file = path.join(dir, 'export.ndjson');
  try {
    let seen = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        if (seen > maxBytes)
          done(new DomainError('PAYLOAD_TOO_LARGE', `an import body is at most ${maxBytes} bytes (TENANT_IMPORT_MAX_BYTES)`));
        else done(null, chunk);
      },
    });
    await pipeline(body, cap, fs.createWriteStream(file));
    return await use(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
