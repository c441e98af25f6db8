import * as zlib from 'zlib';
import type * as Yauzl from 'yauzl';
import { DomainError, ErrorCode } from '../../common/domain-error';
import { statusOf } from '../../common/error-http-mapping';
import { DEFAULT_ARCHIVE_LIMITS, readSourceArchive } from './archive-reader';
import { FakeEntry, makeZip } from '../../../test/support/zip-writer';

// The reader reaches yauzl through the module's exports, so a spy here sees every zipfile it opens.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the module object itself, not an import binding
const yauzlExports: typeof Yauzl = require('yauzl');

const MiB = 1024 * 1024;
const BOM = '\uFEFF';

/** `mib` MiB of zeros as a raw deflate stream, built without ever holding the inflated bytes. */
function deflatedZeros(mib: number): Buffer {
  // Full-flush blocks end byte-aligned and reset the window, so copies can simply be concatenated.
  const block = zlib.deflateRawSync(Buffer.alloc(MiB), { finishFlush: zlib.constants.Z_FULL_FLUSH });
  return Buffer.concat([...Array<Buffer>(mib).fill(block), zlib.deflateRawSync(Buffer.alloc(0))]);
}

async function inflatedLength(raw: Buffer): Promise<number> {
  let n = 0;
  const inflate = zlib.createInflateRaw();
  inflate.on('data', (c: Buffer) => (n += c.length));
  await new Promise((resolve, reject) => inflate.on('end', resolve).on('error', reject).end(raw));
  return n;
}

async function refusal(promise: Promise<unknown>, code: ErrorCode): Promise<DomainError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected ${code}, but the archive was accepted`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).code).toBe(code);
  return err as DomainError;
}

const cs = (name: string, body = 'class C {}'): FakeEntry => ({ name, data: body });

// ---------------------------------------------------------------------------------------------

describe('readSourceArchive', () => {
  let fromBufferSpy: jest.SpyInstance;
  beforeEach(() => {
    fromBufferSpy = jest.spyOn(yauzlExports, 'fromBufferPromise');
  });
  afterEach(() => fromBufferSpy.mockRestore());
  const lastZipfile = async (): Promise<Yauzl.ZipFile> => fromBufferSpy.mock.results.at(-1)!.value;

  it('maps its codes to 400 and 413', () => {
    expect(statusOf('INVALID_ARCHIVE')).toBe(400);
    expect(statusOf('ARCHIVE_TOO_LARGE')).toBe(413);
  });

  it('returns only the .cs files, sorted by path, decoded as UTF-8 with the BOM stripped', async () => {
    const zip = makeZip([
      { name: 'src/' },
      { name: 'src/Domain/' },
      { name: 'src/Domain/Order.cs', data: `${BOM}namespace Shop; // café ✓\nclass Order {}` },
      { name: 'README.md', data: '# not code' },
      { name: 'src/Domain/Events/Created.cs', data: 'record Created;', method: 0 },
      { name: 'Program.cs', data: 'Main();' },
      { name: 'Legacy/Old.CS', data: 'class Old {}' },
      { name: 'src/App.csproj', data: '<Project />' },
    ]);
    const files = await readSourceArchive(zip);
    expect(files).toEqual([
      { path: 'Legacy/Old.CS', content: 'class Old {}' },
      { path: 'Program.cs', content: 'Main();' },
      { path: 'src/Domain/Events/Created.cs', content: 'record Created;' },
      { path: 'src/Domain/Order.cs', content: 'namespace Shop; // café ✓\nclass Order {}' },
    ]);
    expect((await lastZipfile()).isOpen).toBe(false);
  });

  it('accepts a name of exactly 260 characters and a small, very compressible file', async () => {
    const name = `${'d/'.repeat(127)}abc.cs`;
    expect(name).toHaveLength(260);
    const files = await readSourceArchive(makeZip([{ name, data: 'a'.repeat(3000) }]));
    expect(files).toEqual([{ path: name, content: 'a'.repeat(3000) }]);
  });

  it('treats an explicit undefined limit as the default', async () => {
    const zip = makeZip([cs('A.cs', 'x'.repeat(DEFAULT_ARCHIVE_LIMITS.maxEntryBytes + 1))]);
    await refusal(readSourceArchive(zip, { maxEntryBytes: undefined }), 'ARCHIVE_TOO_LARGE');
  });

  describe('refuses with INVALID_ARCHIVE', () => {
    it.each([
      ['a ".." segment', '../evil.cs'],
      ['a ".." segment in the middle', 'src/../../evil.cs'],
      ['a leading slash', '/etc/evil.cs'],
      ['a drive letter', 'C:/evil.cs'],
      ['a drive-relative path', 'c:evil.cs'],
      ['a backslash', 'src\\Evil.cs'],
      ['a backslash in a skipped file', 'docs\\notes.txt'],
      ['a NUL', 'evil\0.cs'],
      ['a name of 261 characters', `${'d/'.repeat(128)}ab.cs`],
    ])('a name with %s', async (_what, name) => {
      const err = await refusal(readSourceArchive(makeZip([cs('Ok.cs'), cs(name)])), 'INVALID_ARCHIVE');
      expect(err.details.entry).toEqual(expect.any(String));
      expect(err.message).toMatch(/entry ".*" has /);
      expect(err.message).not.toContain('\0');
      expect((await lastZipfile()).isOpen).toBe(false);
    });

    it.each([
      ['a .cs symlink', 'Link.cs'],
      ['a directory symlink', 'lib'],
    ])('%s', async (_what, name) => {
      const zip = makeZip([cs('Ok.cs'), { name, data: '/etc/passwd', unixMode: 0o120777 }]);
      const err = await refusal(readSourceArchive(zip), 'INVALID_ARCHIVE');
      expect(err.details).toEqual({ entry: name });
      expect(err.message).toContain('symbolic link');
    });

    it.each(['zip', 'jar', 'nupkg', 'gz', 'tar', '7z', 'rar', 'ZIP'])('a nested .%s archive', async (ext) => {
      const name = `vendor/inner.${ext}`;
      const err = await refusal(readSourceArchive(makeZip([cs('Ok.cs'), { name, data: 'PK' }])), 'INVALID_ARCHIVE');
      expect(err.details).toEqual({ entry: name });
      expect(err.message).toContain('nested archive');
    });

    it('an encrypted entry', async () => {
      const err = await refusal(readSourceArchive(makeZip([cs('Ok.cs'), { ...cs('Secret.cs'), flags: 0x1 }])), 'INVALID_ARCHIVE');
      expect(err.details).toEqual({ entry: 'Secret.cs' });
      expect(err.message).toContain('encrypted');
    });

    it('a .cs entry that is not valid UTF-8', async () => {
      const zip = makeZip([cs('Ok.cs'), { name: 'Latin1.cs', data: Buffer.from([0x2f, 0x2f, 0x20, 0xe9, 0x74, 0xe9]) }]);
      const err = await refusal(readSourceArchive(zip), 'INVALID_ARCHIVE');
      expect(err.details).toEqual({ entry: 'Latin1.cs' });
      expect(err.message).toContain('UTF-8');
    });

    it.each([
      ['an empty buffer', Buffer.alloc(0)],
      ['plain text', Buffer.from('definitely not a zip file, just some text that is long enough')],
      ['a PDF', Buffer.from('%PDF-1.7\n' + 'x'.repeat(100))],
      ['a truncated zip', makeZip([cs('A.cs'), cs('B.cs')]).subarray(0, 40)],
    ])('%s', async (_what, buf) => {
      const err = await refusal(readSourceArchive(buf), 'INVALID_ARCHIVE');
      expect(err.message).toMatch(/not a readable zip/);
    });

    it('an archive whose central directory points at garbage', async () => {
      const zip = makeZip([cs('A.cs')]);
      zip.fill(0xaa, 0, 30); // clobber the local header
      const err = await refusal(readSourceArchive(zip), 'INVALID_ARCHIVE');
      expect(err.details).toEqual({ entry: 'A.cs' });
      expect((await lastZipfile()).isOpen).toBe(false);
    });

    it('a corrupt central directory, translating yauzl’s own error', async () => {
      const zip = makeZip([cs('A.cs'), cs('B.cs')]);
      zip.writeUInt32LE(0xdeadbeef, zip.readUInt32LE(zip.length - 6)); // first central record's signature
      const err = await refusal(readSourceArchive(zip), 'INVALID_ARCHIVE');
      expect(err.message).toMatch(/^archive is corrupt: .*central directory/);
      expect((await lastZipfile()).isOpen).toBe(false);
    });

    it('corrupt deflate data', async () => {
      const zip = makeZip([{ name: 'A.cs', data: 'class A {}', raw: Buffer.from([0xff, 0xff, 0xff, 0xff]) }]);
      const err = await refusal(readSourceArchive(zip), 'INVALID_ARCHIVE');
      expect(err.message).toContain('"A.cs" is corrupt');
    });

    it('a CRC mismatch', async () => {
      const zip = makeZip([{ ...cs('A.cs'), crc: 0x12345678 }]);
      expect((await refusal(readSourceArchive(zip), 'INVALID_ARCHIVE')).message).toContain('CRC');
    });

    it.each([
      ['smaller', 5],
      ['larger', 500],
    ])('a header that says the entry is %s than it is', async (_what, declaredSize) => {
      const zip = makeZip([{ ...cs('A.cs', 'class Abc {}'), declaredSize }]);
      const err = await refusal(readSourceArchive(zip), 'INVALID_ARCHIVE');
      expect(err.message).toContain(`header says ${declaredSize}`);
    });

    it('an unsupported compression method', async () => {
      const zip = makeZip([{ ...cs('A.cs'), method: 12, raw: Buffer.from('BZh9') }]);
      expect((await refusal(readSourceArchive(zip), 'INVALID_ARCHIVE')).message).toContain('compression method 12');
    });

    it('the same path twice', async () => {
      const err = await refusal(readSourceArchive(makeZip([cs('A.cs'), cs('A.cs', 'class B {}')])), 'INVALID_ARCHIVE');
      expect(err.details).toEqual({ entry: 'A.cs' });
    });

    it.each([
      ['only other files', [{ name: 'docs/' }, { name: 'docs/readme.md', data: '# hi' }, { name: 'Foo.cs/' }]],
      ['no entries at all', []],
    ])('an archive with %s', async (_what, entries: FakeEntry[]) => {
      const err = await refusal(readSourceArchive(makeZip(entries)), 'INVALID_ARCHIVE');
      expect(err.message).toContain('no .cs files');
    });
  });

  describe('refuses with ARCHIVE_TOO_LARGE', () => {
    it('an upload over maxArchiveBytes, before parsing it', async () => {
      const zip = makeZip([cs('A.cs', 'x'.repeat(500))]);
      const err = await refusal(readSourceArchive(zip, { maxArchiveBytes: zip.length - 1 }), 'ARCHIVE_TOO_LARGE');
      expect(err.details).toEqual({ limit: zip.length - 1 });
      expect(fromBufferSpy).not.toHaveBeenCalled();
      await expect(readSourceArchive(zip, { maxArchiveBytes: zip.length })).resolves.toHaveLength(1);
    });

    it('more entries than maxEntries, counting directories and skipped files', async () => {
      const zip = makeZip([{ name: 'src/' }, { name: 'notes.txt', data: 'n' }, cs('src/A.cs')]);
      const err = await refusal(readSourceArchive(zip, { maxEntries: 2 }), 'ARCHIVE_TOO_LARGE');
      expect(err.details).toEqual({ limit: 2 });
      expect(err.message).toContain('3 entries');
      await expect(readSourceArchive(zip, { maxEntries: 3 })).resolves.toHaveLength(1);
    });

    it('an entry over maxEntryBytes', async () => {
      const zip = makeZip([cs('Big.cs', 'x'.repeat(1001))]);
      const err = await refusal(readSourceArchive(zip, { maxEntryBytes: 1000 }), 'ARCHIVE_TOO_LARGE');
      expect(err.details).toEqual({ entry: 'Big.cs', limit: 1000 });
      expect(err.message).toContain('per-entry limit');
      await expect(readSourceArchive(zip, { maxEntryBytes: 1001 })).resolves.toHaveLength(1);
    });

    it('entries that together exceed maxTotalBytes, naming the one that crossed it', async () => {
      const zip = makeZip([cs('A.cs', 'a'.repeat(1000)), cs('B.cs', 'b'.repeat(1000))]);
      const err = await refusal(readSourceArchive(zip, { maxTotalBytes: 1999 }), 'ARCHIVE_TOO_LARGE');
      expect(err.details).toEqual({ entry: 'B.cs', limit: 1999 });
      expect(err.message).toContain('total limit');
      await expect(readSourceArchive(zip, { maxTotalBytes: 2000 })).resolves.toHaveLength(2);
    });

    it('an entry that expands more than maxRatio times', async () => {
      // 1 MiB of zeros deflates to about 1 KiB: within the per-entry cap, far beyond 100×.
      const zip = makeZip([{ name: 'Zeros.cs', data: Buffer.alloc(MiB) }]);
      const err = await refusal(readSourceArchive(zip), 'ARCHIVE_TOO_LARGE');
      expect(err.details).toEqual({ entry: 'Zeros.cs', limit: 100 });
      expect(err.message).toContain('zip bomb');
      await expect(readSourceArchive(zip, { maxRatio: 5000 })).resolves.toHaveLength(1);
    });

    describe('a zip bomb whose headers claim 100 bytes but which inflates to 50 MiB', () => {
      const raw = deflatedZeros(50);
      const bomb = makeZip([cs('Ok.cs'), { name: 'Bomb.cs', raw, declaredSize: 100, crc: 0 }]);

      it('really is one', async () => {
        expect(bomb.length).toBeLessThan(DEFAULT_ARCHIVE_LIMITS.maxArchiveBytes);
        expect(await inflatedLength(raw)).toBe(50 * MiB);
      });

      it.each([
        ['the per-entry cap', {}, 2 * MiB],
        ['the ratio cap', { maxEntryBytes: 1024 * MiB, maxTotalBytes: 1024 * MiB }, 100],
      ])('is stopped by %s, quickly and without ballooning memory', async (_what, limits, limit) => {
        const used = (): number => {
          const m = process.memoryUsage();
          return m.heapUsed + m.external;
        };
        const baseline = used();
        let peak = baseline;
        const sampler = setInterval(() => {
          peak = Math.max(peak, used());
        }, 1);
        const started = Date.now();
        try {
          const err = await refusal(readSourceArchive(bomb, limits), 'ARCHIVE_TOO_LARGE');
          expect(err.details).toEqual({ entry: 'Bomb.cs', limit });
        } finally {
          clearInterval(sampler);
        }
        peak = Math.max(peak, used());
        expect(Date.now() - started).toBeLessThan(2000);
        expect(peak - baseline).toBeLessThan(25 * MiB);
        expect((await lastZipfile()).isOpen).toBe(false);
      });
    });
  });
});
