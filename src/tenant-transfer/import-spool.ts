import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { DomainError } from '../common/domain-error';

/**
 * An import's body goes to a temporary file first (never into memory): the store's one import
 * transaction then runs from disk at disk speed, not at the client's (on SQLite it holds the
 * database's write lock: a slow upload must not). Over `maxBytes` → 413 PAYLOAD_TOO_LARGE; the body
 * is left unread then (not destroyed, so the answer still reaches the client; the route closes the connection).
 */
export async function spoolBody<T>(body: Readable, maxBytes: number, use: (file: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-import-'));
  const file = path.join(dir, 'export.ndjson');
  try {
    await new Promise<void>((resolve, reject) => {
      const out = fs.createWriteStream(file);
      let seen = 0;
      let failed = false;
      const fail = (e: unknown) => {
        if (failed) return;
        failed = true;
        body.unpipe(out);
        body.pause();
        out.destroy();
        reject(e instanceof Error ? e : new Error(String(e)));
      };
      body.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > maxBytes)
          fail(new DomainError('PAYLOAD_TOO_LARGE', `an import body is at most ${maxBytes} bytes (TENANT_IMPORT_MAX_BYTES)`));
      });
      // The body deadline (BODY_READ_TIMEOUT_MS) fails the request stream with REQUEST_TIMEOUT: it is answered as such.
      body.once('error', fail);
      out.once('error', fail);
      out.once('finish', () => {
        if (!failed) resolve();
      });
      body.pipe(out);
    });
    return await use(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
