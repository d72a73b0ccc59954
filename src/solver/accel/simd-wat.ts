// Pieces of the SIMD module's WebAssembly text (simd.ts), generated so that each is written once:
// the matMul micro-kernel's register tiles and the loop that calls them across a block of rows, the
// exp polynomial and GELU's gate (inlined where used), and loops over rows and columns.

export type Tile = { rows: number; vecs: number }; // vecs 0: one scalar column

function tileName(t: Tile): string {
  return `$tile_${t.rows}_${t.vecs}`;
}

/**
 * One tile: C[r, cols] = Σ_k A[r, k]·B[k, cols] (+ bias[cols]) for r < rows. Pointers and strides
 * in bytes. $acc ≠ 0: continue the sum of an earlier block of k (start from C); else start from the
 * bias row at $bias, or from zero when $bias is 0.
 */
export function tileFunc(t: Tile, fma: boolean): string {
  const { rows, vecs } = t;
  const scalar = vecs === 0;
  const V = scalar ? 1 : vecs;
  const acc = (r: number, v: number): string => `$acc${r}_${v}`;
  const lines: string[] = [];
  lines.push(
    `(func ${tileName(t)} (param $ap i32) (param $bp i32) (param $cp i32) (param $k i32) (param $sAm i32) (param $sAk i32) (param $N4 i32) (param $acc i32) (param $bias i32)`,
  );
  for (let r = 0; r < rows; r++) lines.push(`  (local $a${r} i32)`);
  for (let r = 0; r < rows; r++)
    for (let v = 0; v < V; v++) lines.push(`  (local ${acc(r, v)} ${scalar ? 'f32' : 'v128'})`);
  for (let v = 0; v < V; v++) lines.push(`  (local $b${v} ${scalar ? 'f32' : 'v128'})`);
  lines.push(`  (local $x ${scalar ? 'f32' : 'v128'})`);
  lines.push('  (local.set $a0 (local.get $ap))');
  lines.push('  (if (local.get $acc) (then');
  for (let r = 0; r < rows; r++) {
    for (let v = 0; v < V; v++) {
      const at = r === 0 ? '(local.get $cp)' : `(i32.add (local.get $cp) (i32.mul (local.get $N4) (i32.const ${r})))`;
      lines.push(
        scalar
          ? `    (local.set ${acc(r, v)} (f32.load ${at}))`
          : `    (local.set ${acc(r, v)} (v128.load offset=${16 * v} ${at}))`,
      );
    }
  }
  lines.push('  ) (else (if (local.get $bias) (then');
  for (let v = 0; v < V; v++) {
    lines.push(
      scalar
        ? `    (local.set ${acc(0, v)} (f32.load (local.get $bias)))`
        : `    (local.set ${acc(0, v)} (v128.load offset=${16 * v} (local.get $bias)))`,
    );
    for (let r = 1; r < rows; r++) lines.push(`    (local.set ${acc(r, v)} (local.get ${acc(0, v)}))`);
  }
  lines.push('  ))))');
  for (let r = 1; r < rows; r++) lines.push(`  (local.set $a${r} (i32.add (local.get $a${r - 1}) (local.get $sAm)))`);
  lines.push('  (loop $l');
  for (let v = 0; v < V; v++) {
    lines.push(
      scalar
        ? `    (local.set $b${v} (f32.load (local.get $bp)))`
        : `    (local.set $b${v} (v128.load offset=${16 * v} (local.get $bp)))`,
    );
  }
  for (let r = 0; r < rows; r++) {
    lines.push(
      scalar
        ? `    (local.set $x (f32.load (local.get $a${r})))`
        : `    (local.set $x (v128.load32_splat (local.get $a${r})))`,
    );
    for (let v = 0; v < V; v++) {
      lines.push(
        scalar
          ? `    (local.set ${acc(r, v)} (f32.add (local.get ${acc(r, v)}) (f32.mul (local.get $x) (local.get $b${v}))))`
          : fma
            ? `    (local.set ${acc(r, v)} (f32x4.relaxed_madd (local.get $x) (local.get $b${v}) (local.get ${acc(r, v)})))`
            : `    (local.set ${acc(r, v)} (f32x4.add (local.get ${acc(r, v)}) (f32x4.mul (local.get $x) (local.get $b${v}))))`,
      );
    }
    lines.push(`    (local.set $a${r} (i32.add (local.get $a${r}) (local.get $sAk)))`);
  }
  lines.push('    (local.set $bp (i32.add (local.get $bp) (local.get $N4)))');
  lines.push('    (br_if $l (local.tee $k (i32.sub (local.get $k) (i32.const 1)))))');
  for (let r = 0; r < rows; r++) {
    for (let v = 0; v < V; v++) {
      lines.push(
        scalar
          ? `  (f32.store (local.get $cp) (local.get ${acc(r, v)}))`
          : `  (v128.store offset=${16 * v} (local.get $cp) (local.get ${acc(r, v)}))`,
      );
    }
    if (r < rows - 1) lines.push('  (local.set $cp (i32.add (local.get $cp) (local.get $N4)))');
  }
  lines.push(')');
  return lines.join('\n');
}

/** Calls the tiles of `rows` rows starting at row $m across all N columns. */
export function rowBlock(rows: number): string {
  const call = (vecs: number): string =>
    `(call ${tileName({ rows, vecs })} (i32.add (local.get $aK) (i32.mul (local.get $m) (local.get $sAm))) (i32.add (local.get $bK) (i32.shl (local.get $n) (i32.const 2))) ` +
    `(i32.add (local.get $cB) (i32.shl (i32.add (i32.mul (local.get $m) (local.get $N)) (local.get $n)) (i32.const 2))) (local.get $kn) (local.get $sAm) (local.get $sAk) (local.get $N4) (local.get $k0) ` +
    '(select (i32.add (local.get $bias) (i32.shl (local.get $n) (i32.const 2))) (i32.const 0) (local.get $bias)))';
  return `
      (local.set $n (i32.const 0))
      (block $d8 (loop $l8
        (br_if $d8 (i32.gt_s (i32.add (local.get $n) (i32.const 8)) (local.get $N)))
        ${call(2)}
        (local.set $n (i32.add (local.get $n) (i32.const 8)))
        (br $l8)))
      (if (i32.le_s (i32.add (local.get $n) (i32.const 4)) (local.get $N)) (then
        ${call(1)}
        (local.set $n (i32.add (local.get $n) (i32.const 4)))))
      (block $d1 (loop $l1
        (br_if $d1 (i32.ge_s (local.get $n) (local.get $N)))
        ${call(0)}
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $l1)))`;
}

/**
 * Rows of B per pass: a long k (weight gradients sum over every token) is cut into blocks so that
 * the block of B a pass streams through stays in cache (128 × 64 floats = 32 KiB); later passes
 * add to C.
 */
export const K_BLOCK = 128;
/** Rows per tile, largest first; the last must be 1. 6-row tiles (12 accumulators) measured slower here. */
export const ROW_BLOCKS = [4, 1];

/** a·b + c on f32x4 text, fused when fma. */
const madd = (a: string, b: string, c: string, fma: boolean): string =>
  fma ? `(f32x4.relaxed_madd ${a} ${b} ${c})` : `(f32x4.add (f32x4.mul ${a} ${b}) ${c})`;

/** colsum's pass over columns 4 at a time (vec) or, after it, one at a time. */
export function colsumPass(vec: boolean): string {
  const [id, w, acc, zero, load, store, more] = vec
    ? [
        'v',
        4,
        '$acc',
        '(v128.const i32x4 0 0 0 0)',
        'f32x4.add (local.get $acc) (v128.load',
        'v128.store',
        '(i32.gt_s (i32.add (local.get $c) (i32.const 4)) (local.get $C))',
      ]
    : [
        's',
        1,
        '$s',
        '(f32.const 0)',
        'f32.add (local.get $s) (f32.load',
        'f32.store',
        '(i32.ge_s (local.get $c) (local.get $C))',
      ];
  return `
    (block $d${id} (loop $l${id}
      (br_if $d${id} ${more})
      (local.set ${acc} ${zero})
      (local.set $p (i32.add (local.get $x) (i32.shl (local.get $c) (i32.const 2))))
      (local.set $r (i32.const 0))
      (block $dr${id} (loop $lr${id}
        (br_if $dr${id} (i32.ge_s (local.get $r) (local.get $R)))
        (local.set ${acc} (${load} (local.get $p))))
        (local.set $p (i32.add (local.get $p) (local.get $C4)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $lr${id})))
      (${store} (i32.add (local.get $out) (i32.shl (local.get $c) (i32.const 2))) (local.get ${acc}))
      (local.set $c (i32.add (local.get $c) (i32.const ${w})))
      (br $l${id})))`;
}

/** A v128 constant of four equal floats. */
export const f4 = (v: number): string => {
  const t = v === Infinity ? 'inf' : v === -Infinity ? '-inf' : String(v);
  return `(v128.const f32x4 ${t} ${t} ${t} ${t})`;
};
export const GELU_C = 2 * Math.sqrt(2 / Math.PI);

// e^x and GELU's gate are inlined where used (as wasm calls they measured no faster), so they are
// written as statements on named locals. Locals they need: $ek $er $ep $ez (v128).

/**
 * Sets local `out` to e^x for the 4 floats in local `x`: x = k·ln2 + r (|r| ≤ ln2/2, ln2 in two
 * parts), e^r by its degree-6 Taylor polynomial (measured over [−87, 88.7]: relative error ≤ 2.5e-7, ~2 ulp), times 2^k built in the
 * exponent bits of two floats (k up to 128 fits that way). x > ln(FLT_MAX) gives +∞, x < −87.3 gives
 * 0 (denormals flushed: an error below 1.2e-38), NaN stays NaN.
 */
export function expInto(out: string, x: string, fma: boolean): string {
  const horner = [1 / 120, 1 / 24, 1 / 6, 0.5, 1, 1]
    .map((c) => `(local.set $ep ${madd('(local.get $ep)', '(local.get $er)', f4(c), fma)})`)
    .join('\n    ');
  const pow2 = (k: string): string => `(i32x4.shl (i32x4.add ${k} (v128.const i32x4 127 127 127 127)) (i32.const 23))`;
  return `
    (local.set $ek (f32x4.pmax (f32x4.pmin (local.get ${x}) ${f4(88.72)}) ${f4(-87.3)})) ;; pmin/pmax: one instruction each
    (local.set $er (local.get $ek))
    (local.set $ek (f32x4.nearest (f32x4.mul (local.get $ek) ${f4(Math.LOG2E)})))
    (local.set $er (f32x4.sub (f32x4.sub (local.get $er) (f32x4.mul (local.get $ek) ${f4(0.693359375)}))
      (f32x4.mul (local.get $ek) ${f4(-2.1219444e-4)})))
    (local.set $ep ${f4(1 / 720)})
    ${horner}
    (local.set $ek (i32x4.trunc_sat_f32x4_s (local.get $ek)))
    (local.set $ep (f32x4.mul (f32x4.mul (local.get $ep) ${pow2('(i32x4.shr_s (local.get $ek) (i32.const 1))')})
      ${pow2('(i32x4.sub (local.get $ek) (i32x4.shr_s (local.get $ek) (i32.const 1)))')}))
    (local.set $ep (v128.andnot (local.get $ep) (f32x4.lt (local.get ${x}) ${f4(-87.3)})))
    (local.set ${out} (v128.bitselect ${f4(Infinity)} (local.get $ep) (f32x4.gt (local.get ${x}) ${f4(88.7228391)})))`;
}

/** Sets local `out` to GELU's gate σ(z), z = c·x·(1 + 0.044715·x²), c = 2·√(2/π), for local `x`. */
export function gateInto(out: string, x: string, fma: boolean): string {
  return `
    (local.set $ez (f32x4.mul (f32x4.mul ${f4(-GELU_C)} (local.get ${x}))
      (f32x4.add ${f4(1)} (f32x4.mul ${f4(0.044715)} (f32x4.mul (local.get ${x}) (local.get ${x}))))))
    ${expInto('$ez', '$ez', fma)}
    (local.set ${out} (f32x4.div ${f4(1)} (f32x4.add ${f4(1)} (local.get $ez))))`;
}
export const EXP_LOCALS = '(local $ek v128) (local $er v128) (local $ep v128) (local $ez v128)';

/** expInto for one float: sets f32 local `out` to e^x for f32 local `x` (locals $sk $sr $sp f32, $si i32). */
export function expScalarInto(out: string, x: string): string {
  const horner = [1 / 120, 1 / 24, 1 / 6, 0.5, 1, 1]
    .map((c) => `(local.set $sp (f32.add (f32.mul (local.get $sp) (local.get $sr)) (f32.const ${c})))`)
    .join('\n    ');
  const pow2 = (k: string): string => `(f32.reinterpret_i32 (i32.shl (i32.add ${k} (i32.const 127)) (i32.const 23)))`;
  return `
    (local.set $sr (f32.max (f32.min (local.get ${x}) (f32.const 88.72)) (f32.const -87.3)))
    (local.set $sk (f32.nearest (f32.mul (local.get $sr) (f32.const ${Math.LOG2E}))))
    (local.set $sr (f32.sub (f32.sub (local.get $sr) (f32.mul (local.get $sk) (f32.const 0.693359375)))
      (f32.mul (local.get $sk) (f32.const -2.12194440e-4))))
    (local.set $sp (f32.const ${1 / 720}))
    ${horner}
    (local.set $si (i32.trunc_sat_f32_s (local.get $sk)))
    (local.set $sp (f32.mul (f32.mul (local.get $sp) ${pow2('(i32.shr_s (local.get $si) (i32.const 1))')})
      ${pow2('(i32.sub (local.get $si) (i32.shr_s (local.get $si) (i32.const 1)))')}))
    (local.set $sp (select (f32.const 0) (local.get $sp) (f32.lt (local.get ${x}) (f32.const -87.3))))
    (local.set ${out} (select (f32.const inf) (local.get $sp) (f32.gt (local.get ${x}) (f32.const 88.7228391))))`;
}
export const EXP_SCALAR_LOCALS = '(local $sk f32) (local $sr f32) (local $sp f32) (local $si i32)';

/**
 * A pass over one row of C floats (C4 = 4·C bytes), the byte offset in local $c: `vec` for each 4
 * floats, then `scl` for each float left.
 */
export function rowPass(id: string, vec: string, scl: string): string {
  return `
      (local.set $c (i32.const 0))
      (block $${id}v (loop $${id}vl
        (br_if $${id}v (i32.gt_s (i32.add (local.get $c) (i32.const 16)) (local.get $C4)))
        ${vec}
        (local.set $c (i32.add (local.get $c) (i32.const 16))) (br $${id}vl)))
      (block $${id}s (loop $${id}sl
        (br_if $${id}s (i32.ge_s (local.get $c) (local.get $C4)))
        ${scl}
        (local.set $c (i32.add (local.get $c) (i32.const 4))) (br $${id}sl)))`;
}

/**
 * A loop over R rows (counter in local $row): `body` for each row, then each pointer local in
 * `advance` moves on by its stride local (bytes).
 */
export function eachRow(body: string, advance: [ptr: string, stride: string][]): string {
  const steps = advance
    .map(([ptr, stride]) => `(local.set ${ptr} (i32.add (local.get ${ptr}) (local.get ${stride})))`)
    .join('\n      ');
  return `(block $done (loop $rows
      (br_if $done (i32.ge_s (local.get $row) (local.get $R)))
      ${body}
      ${steps}
      (local.set $row (i32.add (local.get $row) (i32.const 1)))
      (br $rows)))`;
}
