; dense-tf32: D = C + sum_{k<8} A[k] * B[k]  (tcgen05.mma kind::tf32, F32 D)
;
; Written by hand from docs/SEMANTICS.md (sections 1, 2 and 7), independently
; of the project's own specification and exports.
;
; impl(a0..a7, b0..b7, c) -> D word.  A and B are F32 containers holding
; TF32 values; C and D are F32 words.
;
; Conventions: every integer quantity (significands, exponents, shift
; amounts, window units) is a 64-bit two's-complement bit-vector.  No
; quantity gets near 2^63 (|units| < 2^31 here), so nothing wraps.

(set-logic QF_BV)

; ---------------------------------------------------------------------------
; Small integer helpers
; ---------------------------------------------------------------------------

(define-fun smax ((x (_ BitVec 64)) (y (_ BitVec 64))) (_ BitVec 64)
  (ite (bvsge x y) x y))

; "no term" marker for the window maximum: far below any real raw exponent
(define-fun NOTERM () (_ BitVec 64) (bvneg (_ bv1000000 64)))

(define-fun apply_sign ((neg Bool) (x (_ BitVec 64))) (_ BitVec 64)
  (ite neg (bvneg x) x))

; mag * 2^k with k of either sign; a right shift drops magnitude bits
; (truncation toward zero, section 2 rule 5).  mag is a non-negative magnitude.
(define-fun scale_rz ((mag (_ BitVec 64)) (k (_ BitVec 64))) (_ BitVec 64)
  (ite (bvsge k (_ bv0 64))
       (bvshl mag k)
       (bvlshr mag (bvneg k))))

; count of leading zero bits of a 64-bit word (x != 0), by binary normalisation
(define-fun clz64 ((x0 (_ BitVec 64))) (_ BitVec 64)
  (let ((z32 (= ((_ extract 63 32) x0) #x00000000)))
  (let ((x1 (ite z32 (bvshl x0 (_ bv32 64)) x0)))
  (let ((z16 (= ((_ extract 63 48) x1) #x0000)))
  (let ((x2 (ite z16 (bvshl x1 (_ bv16 64)) x1)))
  (let ((z8 (= ((_ extract 63 56) x2) #x00)))
  (let ((x3 (ite z8 (bvshl x2 (_ bv8 64)) x2)))
  (let ((z4 (= ((_ extract 63 60) x3) #x0)))
  (let ((x4 (ite z4 (bvshl x3 (_ bv4 64)) x3)))
  (let ((z2 (= ((_ extract 63 62) x4) #b00)))
  (let ((x5 (ite z2 (bvshl x4 (_ bv2 64)) x4)))
  (let ((z1 (= ((_ extract 63 63) x5) #b0)))
    (bvadd (ite z32 (_ bv32 64) (_ bv0 64))
           (ite z16 (_ bv16 64) (_ bv0 64))
           (ite z8 (_ bv8 64) (_ bv0 64))
           (ite z4 (_ bv4 64) (_ bv0 64))
           (ite z2 (_ bv2 64) (_ bv0 64))
           (ite z1 (_ bv1 64) (_ bv0 64)))))))))))))))

; ---------------------------------------------------------------------------
; Section 1: the tf32 container.  Fraction bits 12..0 are cleared first
; (w & 0xFFFFE000); sign/exp/frac = 1/8/10, bias 127; IEEE Inf/NaN,
; classified AFTER clearing (a NaN whose payload lies only in bits 12..0
; becomes an infinity).
; ---------------------------------------------------------------------------

(define-fun tf32_clear ((w (_ BitVec 32))) (_ BitVec 32) (bvand w #xFFFFE000))
(define-fun tf32_sign ((w (_ BitVec 32))) Bool
  (= ((_ extract 31 31) (tf32_clear w)) #b1))
(define-fun tf32_exp ((w (_ BitVec 32))) (_ BitVec 8)
  ((_ extract 30 23) (tf32_clear w)))
(define-fun tf32_frac ((w (_ BitVec 32))) (_ BitVec 10)
  ((_ extract 22 13) (tf32_clear w)))

(define-fun tf32_isnan ((w (_ BitVec 32))) Bool
  (and (= (tf32_exp w) #xFF) (not (= (tf32_frac w) #b0000000000))))
(define-fun tf32_isinf ((w (_ BitVec 32))) Bool
  (and (= (tf32_exp w) #xFF) (= (tf32_frac w) #b0000000000)))
(define-fun tf32_iszero ((w (_ BitVec 32))) Bool
  (and (= (tf32_exp w) #x00) (= (tf32_frac w) #b0000000000)))

; Section 1 decode (finite values): m = (1<<10)|frac for normals, frac for
; subnormals and zero; raw r = exp - 127 for normals, 1 - 127 = -126 for
; subnormals and zero; value exponent e = r - 10.
(define-fun tf32_m ((w (_ BitVec 32))) (_ BitVec 64)
  (ite (= (tf32_exp w) #x00)
       ((_ zero_extend 54) (tf32_frac w))
       ((_ zero_extend 53) (concat #b1 (tf32_frac w)))))
(define-fun tf32_r ((w (_ BitVec 32))) (_ BitVec 64)
  (ite (= (tf32_exp w) #x00)
       (bvneg (_ bv126 64))
       (bvsub ((_ zero_extend 56) (tf32_exp w)) (_ bv127 64))))

; ---------------------------------------------------------------------------
; Section 1: the f32 C word: 1/8/23, bias 127, IEEE.  F = 23.
; ---------------------------------------------------------------------------

(define-fun f32_sign ((w (_ BitVec 32))) Bool (= ((_ extract 31 31) w) #b1))
(define-fun f32_exp ((w (_ BitVec 32))) (_ BitVec 8) ((_ extract 30 23) w))
(define-fun f32_frac ((w (_ BitVec 32))) (_ BitVec 23) ((_ extract 22 0) w))
(define-fun f32_isnan ((w (_ BitVec 32))) Bool
  (and (= (f32_exp w) #xFF) (not (= (f32_frac w) #b00000000000000000000000))))
(define-fun f32_isinf ((w (_ BitVec 32))) Bool
  (and (= (f32_exp w) #xFF) (= (f32_frac w) #b00000000000000000000000)))
(define-fun f32_m ((w (_ BitVec 32))) (_ BitVec 64)
  (ite (= (f32_exp w) #x00)
       ((_ zero_extend 41) (f32_frac w))
       ((_ zero_extend 40) (concat #b1 (f32_frac w)))))
(define-fun f32_r ((w (_ BitVec 32))) (_ BitVec 64)
  (ite (= (f32_exp w) #x00)
       (bvneg (_ bv126 64))
       (bvsub ((_ zero_extend 56) (f32_exp w)) (_ bv127 64))))

; ---------------------------------------------------------------------------
; Section 2 rule 2: special values of one product A[k]*B[k].
; ---------------------------------------------------------------------------

; a NaN operand, or Inf x 0 -> canonical NaN
(define-fun p_nan ((a (_ BitVec 32)) (b (_ BitVec 32))) Bool
  (or (tf32_isnan a) (tf32_isnan b)
      (and (tf32_isinf a) (tf32_iszero b))
      (and (tf32_iszero a) (tf32_isinf b))))
; otherwise an infinite product is an infinity with the sign of the product
(define-fun p_inf ((a (_ BitVec 32)) (b (_ BitVec 32))) Bool
  (or (tf32_isinf a) (tf32_isinf b)))
(define-fun p_neg ((a (_ BitVec 32)) (b (_ BitVec 32))) Bool
  (not (= (tf32_sign a) (tf32_sign b))))
(define-fun p_pinf ((a (_ BitVec 32)) (b (_ BitVec 32))) Bool
  (and (p_inf a b) (not (p_neg a b))))
(define-fun p_ninf ((a (_ BitVec 32)) (b (_ BitVec 32))) Bool
  (and (p_inf a b) (p_neg a b)))

; ---------------------------------------------------------------------------
; Section 2 rule 3: exact products.  m = mA*mB (< 2^22), r = rA+rB,
; e = eA+eB = r - 20.  No rounding.
; ---------------------------------------------------------------------------

(define-fun p_m ((a (_ BitVec 32)) (b (_ BitVec 32))) (_ BitVec 64)
  (bvmul (tf32_m a) (tf32_m b)))
(define-fun p_r ((a (_ BitVec 32)) (b (_ BitVec 32))) (_ BitVec 64)
  (bvadd (tf32_r a) (tf32_r b)))
(define-fun p_e ((a (_ BitVec 32)) (b (_ BitVec 32))) (_ BitVec 64)
  (bvsub (p_r a b) (_ bv20 64)))

; Section 2 rule 4: only products with m != 0 (and C if C != 0) take part in
; the window maximum.
(define-fun p_wr ((a (_ BitVec 32)) (b (_ BitVec 32))) (_ BitVec 64)
  (ite (= (p_m a b) (_ bv0 64)) NOTERM (p_r a b)))
(define-fun c_wr ((c (_ BitVec 32))) (_ BitVec 64)
  (ite (= (f32_m c) (_ bv0 64)) NOTERM (f32_r c)))

; Section 2 rule 5: each term independently to signed units of 2^q: shift m
; from exponent e to q; left shifts exact, right shifts truncate the
; magnitude (toward zero, for both signs).
(define-fun p_units ((a (_ BitVec 32)) (b (_ BitVec 32)) (q (_ BitVec 64))) (_ BitVec 64)
  (apply_sign (p_neg a b) (scale_rz (p_m a b) (bvsub (p_e a b) q))))
; C: e = r - 23
(define-fun c_units ((c (_ BitVec 32)) (q (_ BitVec 64))) (_ BitVec 64)
  (apply_sign (f32_sign c)
              (scale_rz (f32_m c) (bvsub (bvsub (f32_r c) (_ bv23 64)) q))))

; ---------------------------------------------------------------------------
; Section 2 rule 7, F32 truncation (RZ): units * 2^q -> F32 word.
;   0 -> +0.  E = bitlen(|units|) - 1 + q.
;   E >= -126: keep the top 24 significant bits, exponent E
;              (i.e. truncate to units of 2^(E-23));
;   E <  -126: subnormal, truncate to units of 2^-149; 0 there -> +0;
;   E > 127  : signed infinity (no saturation to max-finite).
; Both normal and subnormal cases truncate to units of 2^t with
; t = max(E - 23, -149); the word's magnitude is then ((t+149) << 23) + sig
; (sig has its leading 1 at bit 23 for normals, sig < 2^23 for subnormals),
; and a magnitude >= 0x7F800000 means E > 127.
; ---------------------------------------------------------------------------

(define-fun to_f32_rz ((u (_ BitVec 64)) (q (_ BitVec 64))) (_ BitVec 32)
  (let ((neg (bvslt u (_ bv0 64))))
  (let ((mag (ite neg (bvneg u) u)))
  (let ((E (bvadd (bvsub (_ bv63 64) (clz64 mag)) q)))
  (let ((t (smax (bvsub E (_ bv23 64)) (bvneg (_ bv149 64)))))
  (let ((sig (scale_rz mag (bvsub q t))))
  (let ((w (bvadd (bvshl (bvadd t (_ bv149 64)) (_ bv23 64)) sig)))
    (ite (= u (_ bv0 64)) #x00000000                          ; exact 0 -> +0
    (ite (bvsge w #x000000007F800000)                          ; E > 127
         (ite neg #xFF800000 #x7F800000)                       ; signed infinity
    (ite (= sig (_ bv0 64)) #x00000000                        ; subnormal truncated to 0 -> +0
         (concat (ite neg #b1 #b0) ((_ extract 30 0) w))))))))))))

; ---------------------------------------------------------------------------
; The datapath
; ---------------------------------------------------------------------------

(define-fun impl ((a0 (_ BitVec 32)) (a1 (_ BitVec 32)) (a2 (_ BitVec 32)) (a3 (_ BitVec 32))
                  (a4 (_ BitVec 32)) (a5 (_ BitVec 32)) (a6 (_ BitVec 32)) (a7 (_ BitVec 32))
                  (b0 (_ BitVec 32)) (b1 (_ BitVec 32)) (b2 (_ BitVec 32)) (b3 (_ BitVec 32))
                  (b4 (_ BitVec 32)) (b5 (_ BitVec 32)) (b6 (_ BitVec 32)) (b7 (_ BitVec 32))
                  (c (_ BitVec 32))) (_ BitVec 32)
  ; Section 2 rule 2: specials, before any finite arithmetic
  (let ((nan (or (p_nan a0 b0) (p_nan a1 b1) (p_nan a2 b2) (p_nan a3 b3)
                 (p_nan a4 b4) (p_nan a5 b5) (p_nan a6 b6) (p_nan a7 b7)
                 (f32_isnan c)))
        (pinf (or (p_pinf a0 b0) (p_pinf a1 b1) (p_pinf a2 b2) (p_pinf a3 b3)
                  (p_pinf a4 b4) (p_pinf a5 b5) (p_pinf a6 b6) (p_pinf a7 b7)
                  (and (f32_isinf c) (not (f32_sign c)))))
        (ninf (or (p_ninf a0 b0) (p_ninf a1 b1) (p_ninf a2 b2) (p_ninf a3 b3)
                  (p_ninf a4 b4) (p_ninf a5 b5) (p_ninf a6 b6) (p_ninf a7 b7)
                  (and (f32_isinf c) (f32_sign c))))
        ; Section 2 rule 4: R = max raw over nonzero products and nonzero C
        (R0 (smax (smax (smax (p_wr a0 b0) (p_wr a1 b1)) (smax (p_wr a2 b2) (p_wr a3 b3)))
                  (smax (smax (smax (p_wr a4 b4) (p_wr a5 b5)) (smax (p_wr a6 b6) (p_wr a7 b7)))
                        (c_wr c)))))
  ; Section 2 rule 4 (model) / section 7: for tf32, R is clamped below at -133
  (let ((R (smax R0 (bvneg (_ bv133 64)))))
  ; Section 2 rule 4: quantum q = R - 25 (25 fraction bits)
  (let ((q (bvsub R (_ bv25 64))))
  ; Section 2 rules 5 and 6: align each term to 2^q (truncating), sum exactly
  (let ((units (bvadd (p_units a0 b0 q) (p_units a1 b1 q) (p_units a2 b2 q) (p_units a3 b3 q)
                      (p_units a4 b4 q) (p_units a5 b5 q) (p_units a6 b6 q) (p_units a7 b7 q)
                      (c_units c q))))
    (ite nan #x7FFFFFFF                       ; any NaN operand, Inf x 0 -> canonical NaN
    (ite (and pinf ninf) #x7FFFFFFF           ; +Inf and -Inf both present -> NaN
    (ite pinf #x7F800000                      ; one sign only -> that infinity
    (ite ninf #xFF800000
    (ite (= R0 NOTERM) #x00000000             ; no nonzero term -> +0
         (to_f32_rz units q)))))))))))        ; Section 2 rule 7: F32 RZ
