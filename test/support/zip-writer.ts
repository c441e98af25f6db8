import * as zlib from 'zlib';

/** A minimal zip writer that can lie (sizes, CRCs, flags, modes): local headers, central directory, end record. */

export interface FakeEntry {
  name: string | Buffer;
  /** Real uncompressed content; omit for a directory. */
  data?: string | Buffer;
  /** 0 = stored, 8 = deflated (default), anything else is written as-is. */
  method?: number;
  /** Compressed bytes to write verbatim instead of compressing `data`. */
  raw?: Buffer;
  /** Uncompressed size written into both headers; defaults to the real size. */
  declaredSize?: number;
  crc?: number;
  /** Extra general-purpose bits, e.g. 0x1 for "encrypted". */
  flags?: number;
  /** Unix st_mode stored in the high 16 bits of the external attributes. */
  unixMode?: number;
}

export const crc32 = (data: Buffer, value = 0): number =>
  typeof zlib.crc32 === 'function' ? zlib.crc32(data, value) : slowCrc32(data, value);

function slowCrc32(data: Buffer, value: number): number {
  let crc = ~value;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return ~crc >>> 0;
}

export function makeZip(entries: FakeEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name, 'utf8');
    const isDir = name.toString('utf8').endsWith('/');
    const data = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data ?? '', 'utf8');
    const method = e.method ?? (isDir ? 0 : 8);
    const body = e.raw ?? (method === 8 ? zlib.deflateRawSync(data) : data);
    const crc = e.crc ?? crc32(data);
    const size = e.declaredSize ?? data.length;
    const flags = 0x800 | (e.flags ?? 0); // 0x800: names are UTF-8
    const mode = e.unixMode ?? (isDir ? 0o040755 : 0o100644);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, body);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the mode bits mean something
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((mode << 16) | (isDir ? 0x10 : 0)) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** A plain archive of source files, as a tenant would upload it. */
export function zipSources(files: { path: string; content: string }[]): Buffer {
  return makeZip(files.map((f) => ({ name: f.path, data: f.content })));
}
