// safetensors, written by hand: 8-byte little-endian header length, a JSON header
// {name: {dtype: "F32", shape, data_offsets: [begin, end]}, "__metadata__": {...}} padded with
// spaces to a multiple of 8, then the raw little-endian float32 data. `safetensors.torch.load_file`
// reads these files.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

export function encodeSafetensors(tensors: Map<string, NamedTensor>, metadata: Record<string, string> = {}): Buffer {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header['__metadata__'] = metadata;
  let offset = 0;
  const names = [...tensors.keys()];
  for (const name of names) {
    const t = tensors.get(name)!;
    const bytes = t.data.length * 4;
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  while ((8 + Buffer.byteLength(json)) % 8 !== 0) json += ' ';
  const hlen = Buffer.byteLength(json);
  const buf = Buffer.alloc(8 + hlen + offset);
  buf.writeBigUInt64LE(BigInt(hlen), 0);
  buf.write(json, 8, 'utf8');
  let pos = 8 + hlen;
  for (const name of names) {
    const d = tensors.get(name)!.data;
    for (let i = 0; i < d.length; i++, pos += 4) buf.writeFloatLE(d[i]!, pos);
  }
  return buf;
}

export function decodeSafetensors(buf: Buffer): {
  tensors: Map<string, NamedTensor>;
  metadata: Record<string, string>;
} {
  if (buf.length < 8) throw new Error('safetensors: file too short');
  const hlen = Number(buf.readBigUInt64LE(0));
  if (8 + hlen > buf.length) throw new Error('safetensors: header length past end of file');
  const header = JSON.parse(buf.toString('utf8', 8, 8 + hlen)) as Record<string, unknown>;
  const base = 8 + hlen;
  const tensors = new Map<string, NamedTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, v] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = v as Record<string, string>;
      continue;
    }
    const e = v as { dtype: string; shape: number[]; data_offsets: [number, number] };
    if (e.dtype !== 'F32') throw new Error(`safetensors: ${name} has dtype ${e.dtype}, only F32 is read`);
    const [b, en] = e.data_offsets;
    const n = e.shape.reduce((a, c) => a * c, 1);
    if (en - b !== n * 4 || base + en > buf.length) throw new Error(`safetensors: bad offsets for ${name}`);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = buf.readFloatLE(base + b + 4 * i);
    tensors.set(name, { shape: e.shape, data });
  }
  return { tensors, metadata };
}

/** Writes to a temp file in the same folder, fsyncs, then renames over the target. */
export async function writeAtomic(file: string, data: Buffer | string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const h = await fs.open(tmp, 'w');
  try {
    await h.writeFile(data);
    await h.sync();
  } finally {
    await h.close();
  }
  await fs.rename(tmp, file);
}
