;; The batched dot-product kernel of simd-dot.ts, in WebAssembly text.
;; `npm run gen:wasm` assembles it (wabt) into the byte array in simd-dot.ts; `npm test`
;; fails when those bytes no longer match this file. The runtime never assembles.
;;
;; dots(q, base, rows, dim, out): for r < rows, out[r] = Σ_j base[r·dim + j] · q[j], f32.
;; All pointers are byte addresses in `mem`; `dim` is a multiple of 4 (four lanes per step).
;; dots8(q, base, rows, dim, out): the same over int8 rows (the quantised copy), out[r] an i32;
;; `dim` is a multiple of 16 (sixteen lanes per step, widened to i16 and summed pairwise).
(module
  (memory (export "mem") 1)
  (func (export "dots")
    (param $q i32) (param $base i32) (param $rows i32) (param $dim i32) (param $out i32)
    (local $r i32) (local $j i32) (local $row i32) (local $acc v128) (local $rowBytes i32)
    ;; $j runs over bytes, so a row is dim · 4 bytes long.
    (local.set $rowBytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $row (local.get $base))
    (local.set $r (i32.const 0))
    (block $allDone
      (loop $eachRow
        (br_if $allDone (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (block $rowDone
          (loop $eachLane4
            (br_if $rowDone (i32.ge_u (local.get $j) (local.get $rowBytes)))
            ;; acc += row[j..j+4) · q[j..j+4); rows and q are only 4-byte aligned.
            (local.set $acc
              (f32x4.add
                (local.get $acc)
                (f32x4.mul
                  (v128.load align=4 (i32.add (local.get $row) (local.get $j)))
                  (v128.load align=4 (i32.add (local.get $q) (local.get $j))))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $eachLane4)))
        ;; out[r] = the sum of the four lanes.
        (f32.store
          (local.get $out)
          (f32.add
            (f32.add
              (f32.add
                (f32x4.extract_lane 0 (local.get $acc))
                (f32x4.extract_lane 1 (local.get $acc)))
              (f32x4.extract_lane 2 (local.get $acc)))
            (f32x4.extract_lane 3 (local.get $acc))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $row (i32.add (local.get $row) (local.get $rowBytes)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $eachRow))))
  (func (export "dots8")
    (param $q i32) (param $base i32) (param $rows i32) (param $dim i32) (param $out i32)
    (local $r i32) (local $j i32) (local $row i32) (local $acc v128) (local $a v128) (local $b v128)
    (local.set $row (local.get $base))
    (local.set $r (i32.const 0))
    (block $allDone
      (loop $eachRow
        (br_if $allDone (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (block $rowDone
          (loop $eachLane16
            (br_if $rowDone (i32.ge_u (local.get $j) (local.get $dim)))
            (local.set $a (v128.load align=1 (i32.add (local.get $row) (local.get $j))))
            (local.set $b (v128.load align=1 (i32.add (local.get $q) (local.get $j))))
            ;; Low and high eight lanes widened to i16; dot_i16x8 adds neighbouring products into i32.
            (local.set $acc
              (i32x4.add
                (local.get $acc)
                (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $a)) (i16x8.extend_low_i8x16_s (local.get $b)))))
            (local.set $acc
              (i32x4.add
                (local.get $acc)
                (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $a)) (i16x8.extend_high_i8x16_s (local.get $b)))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $eachLane16)))
        (i32.store
          (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $row (i32.add (local.get $row) (local.get $dim)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $eachRow)))))
