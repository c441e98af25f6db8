import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Keeps webhook secrets encrypted at rest: they must be recoverable to sign deliveries (unlike
 * API keys, which are only hashed), so a leaked database dump alone must not reveal them.
 */

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SECRET_KEY_FILE = 'webhook-secrets.key';

export class SecretCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`webhook secrets key must be ${KEY_BYTES} bytes, got ${key.length}`);
  }

  /**
   * The key from WEBHOOK_SECRETS_KEY when given; otherwise one kept in the data directory, so a
   * single-instance deployment works without configuration. Instances sharing a database must
   * share the key, so they need the env variable (or a shared data directory).
   */
  static fromConfig(opts: { keyBase64?: string; dataDir: string }): SecretCipher {
    if (opts.keyBase64 !== undefined) return new SecretCipher(decodeKey(opts.keyBase64, 'WEBHOOK_SECRETS_KEY'));
    return new SecretCipher(loadOrCreateKeyFile(path.join(opts.dataDir, SECRET_KEY_FILE)));
  }

  encrypt(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const b64 = (b: Buffer) => b.toString('base64');
    return `${VERSION}:${b64(iv)}:${b64(cipher.getAuthTag())}:${b64(ciphertext)}`;
  }

  decrypt(text: string): string {
    const parts = text.split(':');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new Error('not an encrypted webhook secret');
    const [iv, tag, ciphertext] = parts.slice(1).map((p) => Buffer.from(p, 'base64'));
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('not an encrypted webhook secret');
    // The tag length is pinned so a truncated tag cannot weaken the check.
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('webhook secret could not be decrypted: wrong key or altered data');
    }
  }
}

function decodeKey(base64: string, source: string): Buffer {
  const trimmed = base64.trim();
  // Buffer.from skips characters that are not base64, so a typo would otherwise go unnoticed.
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
  if (key.length !== KEY_BYTES) {
    throw new Error(`${source} must be ${KEY_BYTES} bytes in base64 (e.g. \`openssl rand -base64 32\`)`);
  }
  return key;
}

function loadOrCreateKeyFile(file: string): Buffer {
  if (fs.existsSync(file)) return decodeKey(fs.readFileSync(file, 'utf8'), file);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const key = randomBytes(KEY_BYTES);
  // Written aside and hard-linked into place: the link fails if another process got there
  // first (like the 'wx' flag) and a reader never sees a half-written file.
  const staging = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(staging, key.toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
  try {
    fs.linkSync(staging, file);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return decodeKey(fs.readFileSync(file, 'utf8'), file);
  } finally {
    fs.unlinkSync(staging);
  }
}
