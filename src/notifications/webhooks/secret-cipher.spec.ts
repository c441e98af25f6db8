import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SecretCipher } from './secret-cipher';

describe('SecretCipher', () => {
  const cipher = new SecretCipher(randomBytes(32));

  it('round-trips, with a fresh IV each time', () => {
    for (const plain of ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '', 'ünïcødé ✓']) {
      expect(cipher.decrypt(cipher.encrypt(plain))).toBe(plain);
    }
    const a = cipher.encrypt('same');
    expect(a).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]*$/);
    expect(cipher.encrypt('same')).not.toBe(a);
  });

  it('refuses altered text', () => {
    const [version, iv, tag, data] = cipher.encrypt('whsec_secret').split(':');
    const flip = (b64: string) => {
      const buf = Buffer.from(b64, 'base64');
      buf[0] ^= 1;
      return buf.toString('base64');
    };
    for (const altered of [
      [version, iv, tag, flip(data)],
      [version, iv, flip(tag), data],
      [version, flip(iv), tag, data],
      [version, iv, Buffer.from(tag, 'base64').subarray(0, 8).toString('base64'), data],
      ['v2', iv, tag, data],
      [iv, tag, data],
    ]) {
      expect(() => cipher.decrypt(altered.join(':'))).toThrow();
    }
  });

  it('refuses a different key', () => {
    const text = cipher.encrypt('whsec_secret');
    expect(() => new SecretCipher(randomBytes(32)).decrypt(text)).toThrow(/wrong key or altered/);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new SecretCipher(randomBytes(16))).toThrow(/32 bytes/);
  });

  describe('fromConfig', () => {
    let dataDir: string;
    beforeEach(() => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-cipher-'));
    });
    afterEach(() => {
      jest.restoreAllMocks();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const keyFile = () => path.join(dataDir, 'webhook-secrets.key');

    it('uses the env key and leaves the data directory alone', () => {
      const key = randomBytes(32);
      const fromEnv = SecretCipher.fromConfig({ keyBase64: key.toString('base64'), dataDir });
      expect(new SecretCipher(key).decrypt(fromEnv.encrypt('x'))).toBe('x');
      expect(fs.existsSync(keyFile())).toBe(false);
    });

    it('refuses an env key that is not 32 bytes of base64', () => {
      for (const bad of ['', randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), 'not base64 at all!']) {
        expect(() => SecretCipher.fromConfig({ keyBase64: bad, dataDir })).toThrow(/WEBHOOK_SECRETS_KEY must be 32 bytes/);
      }
    });

    it('creates a key file once, private to the owner, and reuses it', () => {
      const first = SecretCipher.fromConfig({ dataDir });
      const stat = fs.statSync(keyFile());
      expect(stat.mode & 0o777).toBe(0o600);
      expect(Buffer.from(fs.readFileSync(keyFile(), 'utf8'), 'base64')).toHaveLength(32);

      const content = fs.readFileSync(keyFile(), 'utf8');
      const second = SecretCipher.fromConfig({ dataDir });
      expect(fs.readFileSync(keyFile(), 'utf8')).toBe(content);
      expect(second.decrypt(first.encrypt('x'))).toBe('x');
      expect(fs.readdirSync(dataDir)).toEqual(['webhook-secrets.key']);
    });

    it('adopts the key of a process that created the file first', () => {
      const winner = SecretCipher.fromConfig({ dataDir });
      // As if this process checked before the other one wrote the file.
      const exists = jest.spyOn(jest.requireActual<typeof fs>('node:fs'), 'existsSync').mockReturnValue(false);
      const loser = SecretCipher.fromConfig({ dataDir });
      expect(exists).toHaveBeenCalled();
      expect(loser.decrypt(winner.encrypt('x'))).toBe('x');
      expect(fs.readdirSync(dataDir)).toEqual(['webhook-secrets.key']);
    });

    it('refuses a corrupt key file rather than replacing it', () => {
      fs.writeFileSync(keyFile(), 'short');
      expect(() => SecretCipher.fromConfig({ dataDir })).toThrow(/webhook-secrets\.key must be 32 bytes/);
      expect(fs.readFileSync(keyFile(), 'utf8')).toBe('short');
    });
  });
});
