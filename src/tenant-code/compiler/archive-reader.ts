import * as yauzl from 'yauzl';
import * as zlib from 'zlib';
import { DomainError } from '../../common/domain-error';

/**
 * Reads a tenant's zip of C# sources entirely in memory. Nothing is ever written to disk, and
 * every size the archive declares about itself is treated as a claim, not a fact: bytes are
 * counted as the inflater produces them and the stream is destroyed the moment a cap is crossed.
 */
export interface ArchiveLimits {
  /** Size of the compressed upload itself. */
  maxArchiveBytes: number;
  /** Every central-directory record counts: directories and skipped files included. */
  maxEntries: number;
  /** Sum of the inflated bytes of all entries actually read (the .cs files). */
  maxTotalBytes: number;
  maxEntryBytes: number;
  /** Inflated bytes may not exceed maxRatio × compressed bytes (+ RATIO_ALLOWANCE). */
  maxRatio: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = Object.freeze({
  maxArchiveBytes: 5 * MiB,
  maxEntries: 1000,
  maxTotalBytes: 20 * MiB,
  maxEntryBytes: 2 * MiB,
  maxRatio: 100,
});

export interface SourceFile {
  path: string;
  content: string;
}

/** Tiny files compress badly in absolute terms but extremely well in ratio; don't refuse them. */
const RATIO_ALLOWANCE = 4 * 1024;
const MAX_NAME_LENGTH = 260;
const NESTED_ARCHIVE = /\.(zip|jar|nupkg|gz|tar|7z|rar)$/i;
const SOURCE_FILE = /\.cs$/i;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const FLAG_ENCRYPTED = 0x1;
const METHOD_STORED = 0;
const METHOD_DEFLATED = 8;

const invalid = (message: string, entry?: string): DomainError =>
  new DomainError('INVALID_ARCHIVE', message, entry === undefined ? {} : { entry });

const tooLarge = (message: string, limit: number, entry?: string): DomainError =>
  new DomainError('ARCHIVE_TOO_LARGE', message, entry === undefined ? { limit } : { entry, limit });

export async function readSourceArchive(zip: Buffer, limits: Partial<ArchiveLimits> = {}): Promise<SourceFile[]> {
  const caps = mergeLimits(limits);
  if (zip.length > caps.maxArchiveBytes) {
    throw tooLarge(`archive is ${zip.length} bytes; the limit is ${caps.maxArchiveBytes} bytes`, caps.maxArchiveBytes);
  }

  let zipfile: yauzl.ZipFile;
  try {
    // decodeStrings: false so yauzl does not reject names itself: we validate them with our own
    // messages naming the entry. validateEntrySizes: false because yauzl's check would fire on a
    // lying header before our caps do (and as a generic error); we check sizes and CRC ourselves.
    zipfile = await yauzl.fromBufferPromise(zip, {
      lazyEntries: true,
      decodeStrings: false,
      validateEntrySizes: false,
      strictFileNames: true,
    });
  } catch (err) {
    throw invalid(`upload is not a readable zip archive: ${messageOf(err)}`);
  }

  try {
    // yauzl reads exactly entryCount records, so refusing here bounds the whole walk.
    if (zipfile.entryCount > caps.maxEntries) {
      throw tooLarge(`archive has ${zipfile.entryCount} entries; the limit is ${caps.maxEntries}`, caps.maxEntries);
    }
    const files: SourceFile[] = [];
    const seen = new Set<string>();
    const budget = { total: 0 };
    for await (const entry of zipfile.eachEntry()) {
      const name = checkEntry(entry);
      if (seen.has(name)) throw invalid(`entry "${name}" appears more than once`, name);
      seen.add(name);
      if (name.endsWith('/') || !SOURCE_FILE.test(name)) continue;
      const bytes = await readEntry(zipfile, entry, name, caps, budget);
      files.push({ path: name, content: decodeUtf8(bytes, name) });
    }
    if (files.length === 0) throw invalid('archive contains no .cs files');
    // Code-unit order, not localeCompare: the same archive must compile identically on any host.
    return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw invalid(`archive is corrupt: ${messageOf(err)}`);
  } finally {
    zipfile.close();
  }
}

function mergeLimits(limits: Partial<ArchiveLimits>): ArchiveLimits {
  const caps = { ...DEFAULT_ARCHIVE_LIMITS };
  for (const key of Object.keys(caps) as (keyof ArchiveLimits)[]) {
    const value = limits[key];
    // An explicit undefined must not switch a cap off.
    if (value !== undefined) caps[key] = value;
  }
  return caps;
}

/** Refusals that depend only on the central-directory record; returns the entry's name. */
function checkEntry(entry: yauzl.Entry): string {
  const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
  const problem = nameProblem(name);
  if (problem) {
    const shown = printable(name.length > MAX_NAME_LENGTH ? `${name.slice(0, MAX_NAME_LENGTH)}…` : name);
    throw invalid(`entry "${shown}" has ${problem}`, shown);
  }
  if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) {
    throw invalid(`entry "${name}" is a symbolic link; links are not allowed`, name);
  }
  if (NESTED_ARCHIVE.test(name)) throw invalid(`entry "${name}" is a nested archive; archives inside archives are not allowed`, name);
  if (entry.generalPurposeBitFlag & FLAG_ENCRYPTED) throw invalid(`entry "${name}" is encrypted; encrypted entries are not allowed`, name);
  return name;
}

function nameProblem(name: string): string | null {
  if (name.length === 0) return 'an empty name';
  if (name.length > MAX_NAME_LENGTH) return `a name longer than ${MAX_NAME_LENGTH} characters`;
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'a NUL or other control character in its name';
  if (name.includes('\\')) return 'a backslash in its name (use forward slashes)';
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return 'an absolute path';
  if (name.split('/').includes('..')) return 'a ".." path segment';
  return null;
}

/** Refused names still appear in the message; keep control characters out of it and of logs. */
function printable(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function readEntry(
  zipfile: yauzl.ZipFile,
  entry: yauzl.Entry,
  name: string,
  caps: ArchiveLimits,
  budget: { total: number },
): Promise<Buffer> {
  if (entry.compressionMethod !== METHOD_STORED && entry.compressionMethod !== METHOD_DEFLATED) {
    return Promise.reject(invalid(`entry "${name}" uses unsupported compression method ${entry.compressionMethod}`, name));
  }
  // compressedSize is safe to rely on here: yauzl never feeds the inflater more than that many
  // bytes and has checked they lie inside the upload.
  const ratioCap = caps.maxRatio * entry.compressedSize + RATIO_ALLOWANCE;
  return new Promise<Buffer>((resolve, reject) => {
    zipfile.openReadStream(entry, (openErr, stream) => {
      if (openErr) return reject(invalid(`entry "${name}" cannot be read: ${openErr.message}`, name));
      const chunks: Buffer[] = [];
      let produced = 0;
      let crc = 0;
      let settled = false;
      const fail = (err: DomainError): void => {
        if (settled) return;
        settled = true;
        stream.destroy();
        reject(err);
      };
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        produced += chunk.length;
        if (produced > caps.maxEntryBytes) {
          return fail(
            tooLarge(`entry "${name}" inflates beyond the per-entry limit of ${caps.maxEntryBytes} bytes`, caps.maxEntryBytes, name),
          );
        }
        if (produced > ratioCap) {
          return fail(
            tooLarge(
              `entry "${name}" inflates to more than ${caps.maxRatio}× its ${entry.compressedSize} compressed bytes (likely a zip bomb)`,
              caps.maxRatio,
              name,
            ),
          );
        }
        if (budget.total + produced > caps.maxTotalBytes) {
          return fail(
            tooLarge(`archive inflates beyond the total limit of ${caps.maxTotalBytes} bytes at entry "${name}"`, caps.maxTotalBytes, name),
          );
        }
        crc = crc32(chunk, crc);
        chunks.push(chunk);
      });
      stream.on('error', (err: Error) => fail(invalid(`entry "${name}" is corrupt: ${err.message}`, name)));
      // A stream destroyed by anyone else ends with 'close' alone; never leave the caller waiting.
      stream.on('close', () => fail(invalid(`entry "${name}" ended before all of its data was read`, name)));
      stream.on('end', () => {
        if (settled) return;
        if (produced !== entry.uncompressedSize) {
          return fail(invalid(`entry "${name}" inflates to ${produced} bytes but its header says ${entry.uncompressedSize}`, name));
        }
        if (crc !== entry.crc32) return fail(invalid(`entry "${name}" fails its CRC-32 check`, name));
        settled = true;
        budget.total += produced;
        resolve(Buffer.concat(chunks, produced));
      });
    });
  });
}

// fatal: bad bytes throw instead of becoming U+FFFD; ignoreBOM defaults to false, which strips one BOM.
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Buffer, name: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalid(`entry "${name}" is not valid UTF-8 text`, name);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** zlib.crc32 arrived in Node 20.15; the table version keeps older 20.x working. */
const crc32: (data: Uint8Array, value: number) => number = typeof zlib.crc32 === 'function' ? zlib.crc32 : tableCrc32;

let crcTable: Uint32Array | undefined;
function tableCrc32(data: Uint8Array, value: number): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = ~value;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return ~crc >>> 0;
}
