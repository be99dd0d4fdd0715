;; The batched dot-product kernel of simd-dot.ts, in WebAssembly text.
;; `npm run gen:wasm` assembles it (wabt) into the byte array in simd-dot.ts; `npm test`
;; fails when those bytes no longer match this file. The runtime never assembles.
;;
;; dots(q, base, rows, dim, out): for r < rows, out[r] = Σ_j base[r·dim + j] · q[j], f32.
;; All pointers are byte addresses in `mem`; `dim` is a multiple of 4 (four lanes per step).
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
        (br $eachRow)))))
