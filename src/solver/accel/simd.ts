// WebAssembly SIMD kernels that run inside tfjs-wasm's own heap (they import its memory, so tensors
// are read and written in place, with no copies). wasm-kernels.ts registers them as tfjs kernels.
//
// Why: tfjs-wasm sends 2-D matMuls to XNNPACK but every batched or transposed one (attention's
// Q·Kᵀ, P·V and every gradient) through a scalar loop at 0.2–0.7 GMAC/s, about half of a training
// step; its exp is scalar; and a transformer layer is dozens of small elementwise kernels.
//
// The module is written as WebAssembly text, generated (its pieces in simd-wat.ts) so that the
// register-blocked micro-kernel and the inlined exp can be written once, and assembled at start-up
// with wabt (npm).
// Its functions:
// - matmul: C[b] = A[b]·B[b] (+ bias), B and C row-major and contiguous, A read through element
//   strides (so a transposed A costs nothing). The micro-kernel keeps a 4×8 block of C in eight
//   v128 accumulators: per k it loads 8 floats of B's row k and broadcasts 4 scalars of A's column
//   k, and does 32 multiply-adds (fused where the engine has relaxed SIMD; see compileSimdModule).
//   Edges use 4×4, 4×1 (scalar), 1×8, 1×4 and 1×1 tiles. transpose packs a transposed B.
// - exp (a polynomial, expInto), softmax and its gradient, gelu and its gradient, layernorm and its
//   gradient, adamw: one pass each over the data.
// - colsum (sums over leading axes), copy2d (strided runs: concat, gather).

import v8 from 'node:v8';
import {
  EXP_LOCALS,
  EXP_SCALAR_LOCALS,
  GELU_C,
  K_BLOCK,
  ROW_BLOCKS,
  colsumPass,
  eachRow,
  expInto,
  expScalarInto,
  f4,
  gateInto,
  rowBlock,
  rowPass,
  tileFunc,
  type Tile,
} from './simd-wat.js';

/** The module's text; fma: fused multiply-adds (relaxed SIMD) in the vector tiles. */
function simdModuleText(fma: boolean): string {
  const tiles: Tile[] = ROW_BLOCKS.flatMap((rows) => [2, 1, 0].map((vecs) => ({ rows, vecs })));
  return `(module
  (import "env" "memory" (memory 0))
${tiles.map((t) => tileFunc(t, fma)).join('\n')}
  ;; C[b] (M×N) = A[b]·B[b] (+ bias, N floats, unless $bias is 0); A[b][m][k] at a + 4·(b·bsA + m·sAm + k·sAk);
  ;; B[b] (K×N) at b + 4·b·bsB; C contiguous. K ≥ 1.
  (func (export "matmul") (param $a i32) (param $b i32) (param $c i32) (param $batch i32) (param $M i32) (param $N i32) (param $K i32)
      (param $sAm i32) (param $sAk i32) (param $bsA i32) (param $bsB i32) (param $bias i32)
    (local $i i32) (local $m i32) (local $n i32) (local $aB i32) (local $bB i32) (local $cB i32) (local $N4 i32)
    (local $k0 i32) (local $kn i32) (local $aK i32) (local $bK i32)
    (local.set $sAm (i32.shl (local.get $sAm) (i32.const 2)))
    (local.set $sAk (i32.shl (local.get $sAk) (i32.const 2)))
    (local.set $N4 (i32.shl (local.get $N) (i32.const 2)))
    (local.set $aB (local.get $a)) (local.set $bB (local.get $b)) (local.set $cB (local.get $c))
    (block $done (loop $batches
      (br_if $done (i32.ge_s (local.get $i) (local.get $batch)))
      (local.set $k0 (i32.const 0))
      (loop $kb
      (local.set $kn (select (i32.const ${K_BLOCK}) (i32.sub (local.get $K) (local.get $k0))
        (i32.lt_s (i32.const ${K_BLOCK}) (i32.sub (local.get $K) (local.get $k0)))))
      (local.set $aK (i32.add (local.get $aB) (i32.mul (local.get $k0) (local.get $sAk))))
      (local.set $bK (i32.add (local.get $bB) (i32.mul (local.get $k0) (local.get $N4))))
      (local.set $m (i32.const 0))
${ROW_BLOCKS.map(
  (rows) => `
      (block $dm${rows} (loop $lm${rows}
        (br_if $dm${rows} (i32.gt_s (i32.add (local.get $m) (i32.const ${rows})) (local.get $M)))
        ${rowBlock(rows)}
        (local.set $m (i32.add (local.get $m) (i32.const ${rows})))
        (br $lm${rows})))`,
).join('')}
      (local.set $k0 (i32.add (local.get $k0) (i32.const ${K_BLOCK})))
      (br_if $kb (i32.lt_s (local.get $k0) (local.get $K))))
      (local.set $aB (i32.add (local.get $aB) (i32.shl (local.get $bsA) (i32.const 2))))
      (local.set $bB (i32.add (local.get $bB) (i32.shl (local.get $bsB) (i32.const 2))))
      (local.set $cB (i32.add (local.get $cB) (i32.mul (local.get $N4) (local.get $M))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $batches)))
  )
  ;; dst[b] (C×R) = src[b]ᵀ for src[b] (R×C), both contiguous.
  (func (export "transpose") (param $src i32) (param $dst i32) (param $batch i32) (param $R i32) (param $C i32)
    (local $i i32) (local $r i32) (local $c i32) (local $s i32) (local $d i32) (local $R4 i32)
    (local.set $R4 (i32.shl (local.get $R) (i32.const 2)))
    (block $done (loop $batches
      (br_if $done (i32.ge_s (local.get $i) (local.get $batch)))
      (local.set $r (i32.const 0))
      (block $dr (loop $lr
        (br_if $dr (i32.ge_s (local.get $r) (local.get $R)))
        (local.set $d (i32.add (local.get $dst) (i32.shl (local.get $r) (i32.const 2))))
        (local.set $c (i32.const 0))
        (block $dc (loop $lc
          (br_if $dc (i32.ge_s (local.get $c) (local.get $C)))
          (f32.store (local.get $d) (f32.load (local.get $src)))
          (local.set $src (i32.add (local.get $src) (i32.const 4)))
          (local.set $d (i32.add (local.get $d) (local.get $R4)))
          (local.set $c (i32.add (local.get $c) (i32.const 1)))
          (br $lc)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $lr)))
      (local.set $dst (i32.add (local.get $dst) (i32.mul (local.get $R4) (local.get $C))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $batches)))
  )
  ;; y = x·σ(z) for n floats (n a multiple of 4)
  ;; y = e^x for n floats (n a multiple of 4)
  (func (export "exp") (param $x i32) (param $y i32) (param $n i32)
    (local $end i32) (local $v v128) ${EXP_LOCALS}
    (local.set $end (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
      (local.set $v (v128.load (local.get $x)))
      ${expInto('$v', '$v', fma)}
      (v128.store (local.get $y) (local.get $v))
      (local.set $x (i32.add (local.get $x) (i32.const 16)))
      (local.set $y (i32.add (local.get $y) (i32.const 16)))
      (br $l)))
  )
  (func (export "gelu") (param $x i32) (param $y i32) (param $n i32)
    (local $end i32) (local $v v128) (local $s v128) ${EXP_LOCALS}
    (local.set $end (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
      (local.set $v (v128.load (local.get $x)))
      ${gateInto('$s', '$v', fma)}
      (v128.store (local.get $y) (f32x4.mul (local.get $v) (local.get $s)))
      (local.set $x (i32.add (local.get $x) (i32.const 16)))
      (local.set $y (i32.add (local.get $y) (i32.const 16)))
      (br $l)))
  )
  ;; dx = dy·(σ + x·σ·(1 − σ)·c·(1 + 3·0.044715·x²)) for n floats (n a multiple of 4)
  (func (export "gelu_grad") (param $x i32) (param $dy i32) (param $dx i32) (param $n i32)
    (local $end i32) (local $v v128) (local $s v128) (local $zp v128) ${EXP_LOCALS}
    (local.set $end (i32.add (local.get $x) (i32.shl (local.get $n) (i32.const 2))))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $x) (local.get $end)))
      (local.set $v (v128.load (local.get $x)))
      ${gateInto('$s', '$v', fma)}
      (local.set $zp (f32x4.mul ${f4(GELU_C)} (f32x4.add ${f4(1)} (f32x4.mul ${f4(0.134145)} (f32x4.mul (local.get $v) (local.get $v))))))
      (v128.store (local.get $dx) (f32x4.mul (v128.load (local.get $dy))
        (f32x4.add (local.get $s) (f32x4.mul (f32x4.mul (f32x4.mul (local.get $v) (local.get $s)) (f32x4.sub ${f4(1)} (local.get $s))) (local.get $zp)))))
      (local.set $x (i32.add (local.get $x) (i32.const 16)))
      (local.set $dy (i32.add (local.get $dy) (i32.const 16)))
      (local.set $dx (i32.add (local.get $dx) (i32.const 16)))
      (br $l)))
  )
  ;; One AdamW step on n floats (n a multiple of 4), in optim.ts's operation order: gs = g·scale
  ;; (scale: the clip factor, a float at $scale), m' = b1·m + (1−b1)·gs, v' = b2·v + (1−b2)·gs²,
  ;; p' = p·decay − lr·((m'/bc1) / (√(v'/bc2) + eps)). Arguments after n are (1−b1) etc. as given.
  (func (export "adamw") (param $p i32) (param $g i32) (param $m i32) (param $v i32) (param $po i32) (param $mo i32) (param $vo i32) (param $n i32)
      (param $scale i32) (param $lr f32) (param $b1 f32) (param $c1 f32) (param $b2 f32) (param $c2 f32) (param $eps f32) (param $decay f32) (param $bc1 f32) (param $bc2 f32)
    (local $i i32) (local $gs v128) (local $m1 v128) (local $v1 v128) (local $sc v128)
    (local.set $sc (v128.load32_splat (local.get $scale)))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (i32.shl (local.get $n) (i32.const 2))))
      (local.set $gs (f32x4.mul (v128.load (i32.add (local.get $g) (local.get $i))) (local.get $sc)))
      (local.set $m1 (f32x4.add (f32x4.mul (v128.load (i32.add (local.get $m) (local.get $i))) (f32x4.splat (local.get $b1)))
        (f32x4.mul (local.get $gs) (f32x4.splat (local.get $c1)))))
      (local.set $v1 (f32x4.add (f32x4.mul (v128.load (i32.add (local.get $v) (local.get $i))) (f32x4.splat (local.get $b2)))
        (f32x4.mul (f32x4.mul (local.get $gs) (local.get $gs)) (f32x4.splat (local.get $c2)))))
      (v128.store (i32.add (local.get $mo) (local.get $i)) (local.get $m1))
      (v128.store (i32.add (local.get $vo) (local.get $i)) (local.get $v1))
      (v128.store (i32.add (local.get $po) (local.get $i))
        (f32x4.sub (f32x4.mul (v128.load (i32.add (local.get $p) (local.get $i))) (f32x4.splat (local.get $decay)))
          (f32x4.mul (f32x4.div (f32x4.div (local.get $m1) (f32x4.splat (local.get $bc1)))
            (f32x4.add (f32x4.sqrt (f32x4.div (local.get $v1) (f32x4.splat (local.get $bc2)))) (f32x4.splat (local.get $eps))))
            (f32x4.splat (local.get $lr)))))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br $l)))
  )
  ;; Softmax over rows of C floats: y = e^(x − max) / Σ e^(x − max).
  (func (export "softmax") (param $x i32) (param $y i32) (param $R i32) (param $C i32)
    (local $row i32) (local $c i32) (local $C4 i32) (local $vm v128) (local $m f32) (local $vs v128) (local $s f32) (local $v v128) (local $e f32)
    ${EXP_LOCALS} ${EXP_SCALAR_LOCALS}
    (local.set $C4 (i32.shl (local.get $C) (i32.const 2)))
    ${eachRow(
      `(local.set $vm ${f4(-Infinity)})
      (local.set $m (f32.const -inf))
      ${rowPass(
        'mx',
        '(local.set $vm (f32x4.pmax (local.get $vm) (v128.load (i32.add (local.get $x) (local.get $c)))))',
        '(local.set $m (f32.max (local.get $m) (f32.load (i32.add (local.get $x) (local.get $c)))))',
      )}
      (local.set $m (f32.max (f32.max (local.get $m) (f32.max (f32x4.extract_lane 0 (local.get $vm)) (f32x4.extract_lane 1 (local.get $vm))))
        (f32.max (f32x4.extract_lane 2 (local.get $vm)) (f32x4.extract_lane 3 (local.get $vm)))))
      (local.set $vm (f32x4.splat (local.get $m)))
      (local.set $vs (v128.const i32x4 0 0 0 0))
      (local.set $s (f32.const 0))
      ${rowPass(
        'ex',
        `(local.set $v (f32x4.sub (v128.load (i32.add (local.get $x) (local.get $c))) (local.get $vm)))
        ${expInto('$v', '$v', fma)}
        (v128.store (i32.add (local.get $y) (local.get $c)) (local.get $v))
        (local.set $vs (f32x4.add (local.get $vs) (local.get $v)))`,
        `(local.set $e (f32.sub (f32.load (i32.add (local.get $x) (local.get $c))) (local.get $m)))
        ${expScalarInto('$e', '$e')}
        (f32.store (i32.add (local.get $y) (local.get $c)) (local.get $e))
        (local.set $s (f32.add (local.get $s) (local.get $e)))`,
      )}
      (local.set $s (f32.div (f32.const 1) (f32.add (local.get $s) (call $hsum (local.get $vs)))))
      (local.set $vs (f32x4.splat (local.get $s)))
      ${rowPass(
        'sc',
        '(v128.store (i32.add (local.get $y) (local.get $c)) (f32x4.mul (v128.load (i32.add (local.get $y) (local.get $c))) (local.get $vs)))',
        '(f32.store (i32.add (local.get $y) (local.get $c)) (f32.mul (f32.load (i32.add (local.get $y) (local.get $c))) (local.get $s)))',
      )}`,
      [
        ['$x', '$C4'],
        ['$y', '$C4'],
      ],
    )}
  )
  ;; Softmax's gradient over rows of C floats: dx = y·(dy − Σ dy·y).
  (func (export "softmax_grad") (param $y i32) (param $dy i32) (param $dx i32) (param $R i32) (param $C i32)
    (local $row i32) (local $c i32) (local $C4 i32) (local $vs v128) (local $s f32)
    (local.set $C4 (i32.shl (local.get $C) (i32.const 2)))
    ${eachRow(
      `(local.set $vs (v128.const i32x4 0 0 0 0))
      (local.set $s (f32.const 0))
      ${rowPass(
        'dt',
        '(local.set $vs (f32x4.add (local.get $vs) (f32x4.mul (v128.load (i32.add (local.get $dy) (local.get $c))) (v128.load (i32.add (local.get $y) (local.get $c))))))',
        '(local.set $s (f32.add (local.get $s) (f32.mul (f32.load (i32.add (local.get $dy) (local.get $c))) (f32.load (i32.add (local.get $y) (local.get $c))))))',
      )}
      (local.set $s (f32.add (local.get $s) (call $hsum (local.get $vs))))
      (local.set $vs (f32x4.splat (local.get $s)))
      ${rowPass(
        'dx',
        `(v128.store (i32.add (local.get $dx) (local.get $c)) (f32x4.mul (v128.load (i32.add (local.get $y) (local.get $c)))
          (f32x4.sub (v128.load (i32.add (local.get $dy) (local.get $c))) (local.get $vs))))`,
        `(f32.store (i32.add (local.get $dx) (local.get $c)) (f32.mul (f32.load (i32.add (local.get $y) (local.get $c)))
          (f32.sub (f32.load (i32.add (local.get $dy) (local.get $c))) (local.get $s))))`,
      )}`,
      [
        ['$y', '$C4'],
        ['$dy', '$C4'],
        ['$dx', '$C4'],
      ],
    )}
  )
  (func $hsum (param $v v128) (result f32)
    (f32.add (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
      (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))
  ;; LayerNorm of R rows of C floats (C a multiple of 4): y = (x − μ)·r·g + b, r = 1/√(σ² + 1e-5);
  ;; writes μ and r per row for the gradient.
  (func (export "layernorm") (param $x i32) (param $g i32) (param $b i32) (param $y i32) (param $mean i32) (param $rstd i32) (param $R i32) (param $C i32)
    (local $row i32) (local $c i32) (local $acc v128) (local $mu v128) (local $r v128) (local $d v128) (local $C4 i32) (local $inv f32)
    (local.set $C4 (i32.shl (local.get $C) (i32.const 2)))
    (local.set $inv (f32.div (f32.const 1) (f32.convert_i32_s (local.get $C))))
    ${eachRow(
      `(local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $c (i32.const 0))
      (block $d1 (loop $l1 (br_if $d1 (i32.ge_s (local.get $c) (local.get $C4)))
        (local.set $acc (f32x4.add (local.get $acc) (v128.load (i32.add (local.get $x) (local.get $c)))))
        (local.set $c (i32.add (local.get $c) (i32.const 16))) (br $l1)))
      (local.set $mu (f32x4.splat (f32.mul (call $hsum (local.get $acc)) (local.get $inv))))
      (local.set $acc (v128.const i32x4 0 0 0 0))
      (local.set $c (i32.const 0))
      (block $d2 (loop $l2 (br_if $d2 (i32.ge_s (local.get $c) (local.get $C4)))
        (local.set $d (f32x4.sub (v128.load (i32.add (local.get $x) (local.get $c))) (local.get $mu)))
        (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (local.get $d) (local.get $d))))
        (local.set $c (i32.add (local.get $c) (i32.const 16))) (br $l2)))
      (local.set $r (f32x4.splat (f32.div (f32.const 1) (f32.sqrt (f32.add (f32.mul (call $hsum (local.get $acc)) (local.get $inv)) (f32.const 1e-5))))))
      (f32.store (i32.add (local.get $mean) (i32.shl (local.get $row) (i32.const 2))) (f32x4.extract_lane 0 (local.get $mu)))
      (f32.store (i32.add (local.get $rstd) (i32.shl (local.get $row) (i32.const 2))) (f32x4.extract_lane 0 (local.get $r)))
      (local.set $c (i32.const 0))
      (block $d3 (loop $l3 (br_if $d3 (i32.ge_s (local.get $c) (local.get $C4)))
        (v128.store (i32.add (local.get $y) (local.get $c))
          (f32x4.add (f32x4.mul (f32x4.mul (f32x4.sub (v128.load (i32.add (local.get $x) (local.get $c))) (local.get $mu)) (local.get $r))
            (v128.load (i32.add (local.get $g) (local.get $c)))) (v128.load (i32.add (local.get $b) (local.get $c)))))
        (local.set $c (i32.add (local.get $c) (i32.const 16))) (br $l3)))`,
      [
        ['$x', '$C4'],
        ['$y', '$C4'],
      ],
    )}
  )
  ;; LayerNorm's gradient: x̂ = (x − μ)·r, gdy = g·dy; dx = r·(gdy − mean(gdy) − x̂·mean(gdy·x̂));
  ;; dg += Σ_rows dy·x̂, db += Σ_rows dy (dg, db zeroed by the caller).
  (func (export "layernorm_grad") (param $x i32) (param $g i32) (param $mean i32) (param $rstd i32) (param $dy i32) (param $dx i32) (param $dg i32) (param $db i32) (param $R i32) (param $C i32)
    (local $row i32) (local $c i32) (local $C4 i32) (local $inv f32) (local $mu v128) (local $r v128)
    (local $xh v128) (local $d v128) (local $gdy v128) (local $a1 v128) (local $a2 v128) (local $m1 v128) (local $m2 v128)
    (local.set $C4 (i32.shl (local.get $C) (i32.const 2)))
    (local.set $inv (f32.div (f32.const 1) (f32.convert_i32_s (local.get $C))))
    ${eachRow(
      `(local.set $mu (v128.load32_splat (i32.add (local.get $mean) (i32.shl (local.get $row) (i32.const 2)))))
      (local.set $r (v128.load32_splat (i32.add (local.get $rstd) (i32.shl (local.get $row) (i32.const 2)))))
      (local.set $a1 (v128.const i32x4 0 0 0 0))
      (local.set $a2 (v128.const i32x4 0 0 0 0))
      (local.set $c (i32.const 0))
      (block $d1 (loop $l1 (br_if $d1 (i32.ge_s (local.get $c) (local.get $C4)))
        (local.set $xh (f32x4.mul (f32x4.sub (v128.load (i32.add (local.get $x) (local.get $c))) (local.get $mu)) (local.get $r)))
        (local.set $d (v128.load (i32.add (local.get $dy) (local.get $c))))
        (local.set $gdy (f32x4.mul (v128.load (i32.add (local.get $g) (local.get $c))) (local.get $d)))
        (local.set $a1 (f32x4.add (local.get $a1) (local.get $gdy)))
        (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (local.get $gdy) (local.get $xh))))
        (v128.store (i32.add (local.get $dg) (local.get $c)) (f32x4.add (v128.load (i32.add (local.get $dg) (local.get $c))) (f32x4.mul (local.get $d) (local.get $xh))))
        (v128.store (i32.add (local.get $db) (local.get $c)) (f32x4.add (v128.load (i32.add (local.get $db) (local.get $c))) (local.get $d)))
        (local.set $c (i32.add (local.get $c) (i32.const 16))) (br $l1)))
      (local.set $m1 (f32x4.splat (f32.mul (call $hsum (local.get $a1)) (local.get $inv))))
      (local.set $m2 (f32x4.splat (f32.mul (call $hsum (local.get $a2)) (local.get $inv))))
      (local.set $c (i32.const 0))
      (block $d2 (loop $l2 (br_if $d2 (i32.ge_s (local.get $c) (local.get $C4)))
        (local.set $xh (f32x4.mul (f32x4.sub (v128.load (i32.add (local.get $x) (local.get $c))) (local.get $mu)) (local.get $r)))
        (local.set $gdy (f32x4.mul (v128.load (i32.add (local.get $g) (local.get $c))) (v128.load (i32.add (local.get $dy) (local.get $c)))))
        (v128.store (i32.add (local.get $dx) (local.get $c))
          (f32x4.mul (local.get $r) (f32x4.sub (f32x4.sub (local.get $gdy) (local.get $m1)) (f32x4.mul (local.get $xh) (local.get $m2)))))
        (local.set $c (i32.add (local.get $c) (i32.const 16))) (br $l2)))`,
      [
        ['$x', '$C4'],
        ['$dy', '$C4'],
        ['$dx', '$C4'],
      ],
    )}
  )
  ;; R runs of C 4-byte elements: dst + r·ds ← src + r·ss (strides in elements).
  (func (export "copy2d") (param $src i32) (param $ss i32) (param $dst i32) (param $ds i32) (param $R i32) (param $C i32)
    (local $row i32) (local $c i32) (local $C4 i32)
    (local.set $C4 (i32.shl (local.get $C) (i32.const 2)))
    (local.set $ss (i32.shl (local.get $ss) (i32.const 2)))
    (local.set $ds (i32.shl (local.get $ds) (i32.const 2)))
    ${eachRow(
      `${rowPass(
        'cp',
        '(v128.store (i32.add (local.get $dst) (local.get $c)) (v128.load (i32.add (local.get $src) (local.get $c))))',
        '(i32.store (i32.add (local.get $dst) (local.get $c)) (i32.load (i32.add (local.get $src) (local.get $c))))',
      )}`,
      [
        ['$src', '$ss'],
        ['$dst', '$ds'],
      ],
    )}
  )
  ;; out[c] = Σ_r x[r][c] for x (R×C) contiguous: a sum over leading axes.
  (func (export "colsum") (param $x i32) (param $out i32) (param $R i32) (param $C i32)
    (local $r i32) (local $c i32) (local $p i32) (local $acc v128) (local $s f32) (local $C4 i32)
    (local.set $C4 (i32.shl (local.get $C) (i32.const 2)))
${colsumPass(true)}
${colsumPass(false)}
  )
)`;
}

type Wabt = Awaited<ReturnType<typeof import('wabt')>>;

// The tsconfig's libs (ES2022, no DOM) do not type WebAssembly's JS API; the little used here:
export type WasmMemory = { readonly buffer: ArrayBuffer };
export type WasmModule = object;
const WA = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => WasmModule;
      Instance: new (m: WasmModule, imports: object) => { exports: object };
    };
  }
).WebAssembly;

export interface SimdKernels {
  matmul(
    a: number,
    b: number,
    c: number,
    batch: number,
    M: number,
    N: number,
    K: number,
    sAm: number,
    sAk: number,
    bsA: number,
    bsB: number,
    bias: number,
  ): void;
  transpose(src: number, dst: number, batch: number, R: number, C: number): void;
  colsum(x: number, out: number, R: number, C: number): void;
  copy2d(src: number, ss: number, dst: number, ds: number, R: number, C: number): void;
  exp(x: number, y: number, n: number): void;
  softmax(x: number, y: number, R: number, C: number): void;
  softmax_grad(y: number, dy: number, dx: number, R: number, C: number): void;
  adamw(
    p: number,
    g: number,
    m: number,
    v: number,
    po: number,
    mo: number,
    vo: number,
    n: number,
    scale: number,
    lr: number,
    b1: number,
    c1: number,
    b2: number,
    c2: number,
    eps: number,
    decay: number,
    bc1: number,
    bc2: number,
  ): void;
  gelu(x: number, y: number, n: number): void;
  gelu_grad(x: number, dy: number, dx: number, n: number): void;
  layernorm(x: number, g: number, b: number, y: number, mean: number, rstd: number, R: number, C: number): void;
  layernorm_grad(
    x: number,
    g: number,
    mean: number,
    rstd: number,
    dy: number,
    dx: number,
    dg: number,
    db: number,
    R: number,
    C: number,
  ): void;
}

function assemble(wabt: Wabt, fma: boolean): WasmModule {
  const mod = wabt.parseWat('cogen-simd.wat', simdModuleText(fma), { simd: true, relaxed_simd: fma });
  try {
    const bytes = mod.toBinary({}).buffer;
    try {
      return new WA.Module(bytes);
    } catch (e) {
      if (!fma) throw e;
      v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); // Node 20 has relaxed SIMD behind this flag
      return new WA.Module(bytes);
    }
  } finally {
    mod.destroy();
  }
}

/**
 * Assembles the module with wabt (a few ms); instantiate it on tfjs-wasm's heap with instantiateSimd.
 * With fused multiply-adds where the engine has relaxed SIMD (Node 20 has it behind a V8 flag, which
 * assemble sets when the first compile is refused; newer Nodes ship it); with the broadcast loads
 * of A they took the large matMuls here from 11–14 to 17–21 GMAC/s. FMA rounds once where mul + add
 * rounds twice: results may differ in the last bits between machines, never between runs on one.
 */
export async function compileSimdModule(): Promise<WasmModule> {
  try {
    return await assembleSimdModule(true);
  } catch {
    return await assembleSimdModule(false); // no relaxed SIMD in this engine
  }
}

/** The module with or without fused multiply-adds (compileSimdModule picks; tests check both). */
export async function assembleSimdModule(fma: boolean): Promise<WasmModule> {
  return assemble(await (await import('wabt')).default(), fma);
}

export function instantiateSimd(module: WasmModule, memory: WasmMemory): SimdKernels {
  return new WA.Instance(module, { env: { memory } }).exports as unknown as SimdKernels;
}
