; dense-nvfp4: D = C + sum_{k<64} (SA[k/16] * A[k]) * (SB[k/16] * B[k])
; (tcgen05.mma kind::mxf4nvf4 / NVFP4: E2M1 elements, UE4M3 scales,
; scale_vec 4, K = 64, scale blocks of 16, F32 C and D)
;
; Written by hand from docs/SEMANTICS.md (sections 1, 2 and 4), independently
; of the project's own specification and exports.
;
; impl(a0..a63, b0..b63, c, scale_a0..scale_a3, scale_b0..scale_b3) -> D word.
; A and B are 32-bit containers with the E2M1 value in bits 3..0 (the rest
; is ignored); C and D are F32 words; scale_aJ / scale_bJ is the UE4M3 scale
; byte of K block J (elements 16J .. 16J+15).
;
; Conventions: every integer quantity (significands, exponents, shift
; amounts, window units) is a 64-bit two's-complement bit-vector.
; Bounds that keep this exact: each product value is m * 2^e with
; m <= 3*3*15*15 = 2025 and -20 <= e <= 12, so exact sums of up to 64
; products are integers in units of 2^-20 below 2^50; in window units every
; term stays below 2^43 and their sum below 2^50.

(set-logic QF_BV)

; ---------------------------------------------------------------------------
; Small integer helpers
; ---------------------------------------------------------------------------

(define-fun smax ((x (_ BitVec 64)) (y (_ BitVec 64))) (_ BitVec 64)
  (ite (bvsge x y) x y))

; "no term" marker for window maxima: far below any real raw exponent
(define-fun NOTERM () (_ BitVec 64) (bvneg (_ bv1000000 64)))

(define-fun apply_sign ((neg Bool) (x (_ BitVec 64))) (_ BitVec 64)
  (ite neg (bvneg x) x))

; mag * 2^k with k of either sign; a right shift drops magnitude bits
; (truncation toward zero).  mag is a non-negative magnitude.
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
; Section 1: e2m1 elements: low 4 bits of the container (the rest ignored),
; sign/exp/frac = 1/2/1, bias 1, no specials (all finite).  F = 1.
;   m = (1<<1)|frac for normals, frac for subnormals and zero;
;   r = exp - 1 for normals, 1 - 1 = 0 for subnormals and zero; e = r - 1.
; ---------------------------------------------------------------------------

(define-fun e2m1_sign ((w (_ BitVec 32))) Bool (= ((_ extract 3 3) w) #b1))
(define-fun e2m1_exp ((w (_ BitVec 32))) (_ BitVec 2) ((_ extract 2 1) w))
(define-fun e2m1_frac ((w (_ BitVec 32))) (_ BitVec 1) ((_ extract 0 0) w))
(define-fun e2m1_m ((w (_ BitVec 32))) (_ BitVec 64)
  (ite (= (e2m1_exp w) #b00)
       ((_ zero_extend 63) (e2m1_frac w))
       ((_ zero_extend 62) (concat #b1 (e2m1_frac w)))))
(define-fun e2m1_r ((w (_ BitVec 32))) (_ BitVec 64)
  (ite (= (e2m1_exp w) #b00)
       (_ bv0 64)
       (bvsub ((_ zero_extend 62) (e2m1_exp w)) (_ bv1 64))))

; ---------------------------------------------------------------------------
; Section 1: ue4m3 scales: low 7 bits (bit 7 ignored), exp/frac = 4/3,
; bias 7, unsigned; 0x7F (low 7 bits) is NaN; subnormal when exp = 0, so
; 0x00 is a zero scale.  F = 3.
;   m = (1<<3)|frac for normals, frac for subnormals and zero;
;   r = exp - 7 for normals, 1 - 7 = -6 for subnormals and zero; e = r - 3.
; ---------------------------------------------------------------------------

(define-fun ue4m3_isnan ((s (_ BitVec 8))) Bool (= ((_ extract 6 0) s) #b1111111))
(define-fun ue4m3_exp ((s (_ BitVec 8))) (_ BitVec 4) ((_ extract 6 3) s))
(define-fun ue4m3_frac ((s (_ BitVec 8))) (_ BitVec 3) ((_ extract 2 0) s))
(define-fun ue4m3_m ((s (_ BitVec 8))) (_ BitVec 64)
  (ite (= (ue4m3_exp s) #x0)
       ((_ zero_extend 61) (ue4m3_frac s))
       ((_ zero_extend 60) (concat #b1 (ue4m3_frac s)))))
(define-fun ue4m3_r ((s (_ BitVec 8))) (_ BitVec 64)
  (ite (= (ue4m3_exp s) #x0)
       (bvneg (_ bv6 64))
       (bvsub ((_ zero_extend 60) (ue4m3_exp s)) (_ bv7 64))))

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
; Section 4: a product with its scales multiplied in exactly:
;   m = mA*mB*mSA*mSB, r = rA+rB+rSA+rSB, e = eA+eB+eSA+eSB = r - 8
;   (F = 1 + 1 + 3 + 3); its scale raw is rSA+rSB.
; ---------------------------------------------------------------------------

(define-fun np_m ((a (_ BitVec 32)) (b (_ BitVec 32)) (sa (_ BitVec 8)) (sb (_ BitVec 8))) (_ BitVec 64)
  (bvmul (e2m1_m a) (e2m1_m b) (ue4m3_m sa) (ue4m3_m sb)))
(define-fun np_r ((a (_ BitVec 32)) (b (_ BitVec 32)) (sa (_ BitVec 8)) (sb (_ BitVec 8))) (_ BitVec 64)
  (bvadd (e2m1_r a) (e2m1_r b) (ue4m3_r sa) (ue4m3_r sb)))
(define-fun np_neg ((a (_ BitVec 32)) (b (_ BitVec 32))) Bool
  (not (= (e2m1_sign a) (e2m1_sign b))))

; The exact signed product value as an integer in units of 2^-20: every
; product has r >= 0+0-6-6 = -12, so e + 20 = r + 12 >= 0 (exact left shift).
(define-fun np_fix ((a (_ BitVec 32)) (b (_ BitVec 32)) (sa (_ BitVec 8)) (sb (_ BitVec 8))) (_ BitVec 64)
  (apply_sign (np_neg a b)
              (bvshl (np_m a b sa sb) (bvadd (np_r a b sa sb) (_ bv12 64)))))

; Section 4: P and S range over NONZERO products only (m != 0)
(define-fun np_wr ((a (_ BitVec 32)) (b (_ BitVec 32)) (sa (_ BitVec 8)) (sb (_ BitVec 8))) (_ BitVec 64)
  (ite (= (np_m a b sa sb) (_ bv0 64)) NOTERM (np_r a b sa sb)))
(define-fun np_ws ((a (_ BitVec 32)) (b (_ BitVec 32)) (sa (_ BitVec 8)) (sb (_ BitVec 8))) (_ BitVec 64)
  (ite (= (np_m a b sa sb) (_ bv0 64)) NOTERM (bvadd (ue4m3_r sa) (ue4m3_r sb))))

; ---------------------------------------------------------------------------
; Section 4 (NVFP4, (model)): aligned K=4 groups.  A group (elements 4j ..
; 4j+3) lies inside one scale block, so it has one scale pair.
;   g_fix: the group's products summed EXACTLY (units of 2^-20);
;   g_P / g_S: the group's max raw / max scale raw over nonzero products.
; ---------------------------------------------------------------------------

(define-fun g_fix ((x0 (_ BitVec 32)) (x1 (_ BitVec 32)) (x2 (_ BitVec 32)) (x3 (_ BitVec 32))
                   (y0 (_ BitVec 32)) (y1 (_ BitVec 32)) (y2 (_ BitVec 32)) (y3 (_ BitVec 32))
                   (sa (_ BitVec 8)) (sb (_ BitVec 8))) (_ BitVec 64)
  (bvadd (np_fix x0 y0 sa sb) (np_fix x1 y1 sa sb) (np_fix x2 y2 sa sb) (np_fix x3 y3 sa sb)))
(define-fun g_P ((x0 (_ BitVec 32)) (x1 (_ BitVec 32)) (x2 (_ BitVec 32)) (x3 (_ BitVec 32))
                 (y0 (_ BitVec 32)) (y1 (_ BitVec 32)) (y2 (_ BitVec 32)) (y3 (_ BitVec 32))
                 (sa (_ BitVec 8)) (sb (_ BitVec 8))) (_ BitVec 64)
  (smax (smax (np_wr x0 y0 sa sb) (np_wr x1 y1 sa sb))
        (smax (np_wr x2 y2 sa sb) (np_wr x3 y3 sa sb))))
(define-fun g_S ((x0 (_ BitVec 32)) (x1 (_ BitVec 32)) (x2 (_ BitVec 32)) (x3 (_ BitVec 32))
                 (y0 (_ BitVec 32)) (y1 (_ BitVec 32)) (y2 (_ BitVec 32)) (y3 (_ BitVec 32))
                 (sa (_ BitVec 8)) (sb (_ BitVec 8))) (_ BitVec 64)
  (smax (smax (np_ws x0 y0 sa sb) (np_ws x1 y1 sa sb))
        (smax (np_ws x2 y2 sa sb) (np_ws x3 y3 sa sb))))

; An exact sum f (units of 2^-20) truncated toward zero to signed units of 2^q
(define-fun fix_units ((f (_ BitVec 64)) (q (_ BitVec 64))) (_ BitVec 64)
  (let ((neg (bvslt f (_ bv0 64))))
    (apply_sign neg (scale_rz (ite neg (bvneg f) f) (bvsub (bvneg (_ bv20 64)) q)))))

; C to signed units of 2^q (C's e = rC - 23), truncating toward zero
(define-fun c_units ((c (_ BitVec 32)) (q (_ BitVec 64))) (_ BitVec 64)
  (apply_sign (f32_sign c)
              (scale_rz (f32_m c) (bvsub (bvsub (f32_r c) (_ bv23 64)) q))))

; ---------------------------------------------------------------------------
; Section 2 rule 7 (used by section 4: "convert F32 RZ"): units * 2^q -> F32.
;   0 -> +0.  E = bitlen(|units|) - 1 + q.
;   E >= -126: keep the top 24 significant bits, exponent E;
;   E <  -126: subnormal, truncate to units of 2^-149; 0 there -> +0;
;   E > 127  : signed infinity.
; Both finite cases truncate to units of 2^t, t = max(E - 23, -149); the
; magnitude word is ((t+149) << 23) + sig, and >= 0x7F800000 iff E > 127.
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
                  (a8 (_ BitVec 32)) (a9 (_ BitVec 32)) (a10 (_ BitVec 32)) (a11 (_ BitVec 32))
                  (a12 (_ BitVec 32)) (a13 (_ BitVec 32)) (a14 (_ BitVec 32)) (a15 (_ BitVec 32))
                  (a16 (_ BitVec 32)) (a17 (_ BitVec 32)) (a18 (_ BitVec 32)) (a19 (_ BitVec 32))
                  (a20 (_ BitVec 32)) (a21 (_ BitVec 32)) (a22 (_ BitVec 32)) (a23 (_ BitVec 32))
                  (a24 (_ BitVec 32)) (a25 (_ BitVec 32)) (a26 (_ BitVec 32)) (a27 (_ BitVec 32))
                  (a28 (_ BitVec 32)) (a29 (_ BitVec 32)) (a30 (_ BitVec 32)) (a31 (_ BitVec 32))
                  (a32 (_ BitVec 32)) (a33 (_ BitVec 32)) (a34 (_ BitVec 32)) (a35 (_ BitVec 32))
                  (a36 (_ BitVec 32)) (a37 (_ BitVec 32)) (a38 (_ BitVec 32)) (a39 (_ BitVec 32))
                  (a40 (_ BitVec 32)) (a41 (_ BitVec 32)) (a42 (_ BitVec 32)) (a43 (_ BitVec 32))
                  (a44 (_ BitVec 32)) (a45 (_ BitVec 32)) (a46 (_ BitVec 32)) (a47 (_ BitVec 32))
                  (a48 (_ BitVec 32)) (a49 (_ BitVec 32)) (a50 (_ BitVec 32)) (a51 (_ BitVec 32))
                  (a52 (_ BitVec 32)) (a53 (_ BitVec 32)) (a54 (_ BitVec 32)) (a55 (_ BitVec 32))
                  (a56 (_ BitVec 32)) (a57 (_ BitVec 32)) (a58 (_ BitVec 32)) (a59 (_ BitVec 32))
                  (a60 (_ BitVec 32)) (a61 (_ BitVec 32)) (a62 (_ BitVec 32)) (a63 (_ BitVec 32))
                  (b0 (_ BitVec 32)) (b1 (_ BitVec 32)) (b2 (_ BitVec 32)) (b3 (_ BitVec 32))
                  (b4 (_ BitVec 32)) (b5 (_ BitVec 32)) (b6 (_ BitVec 32)) (b7 (_ BitVec 32))
                  (b8 (_ BitVec 32)) (b9 (_ BitVec 32)) (b10 (_ BitVec 32)) (b11 (_ BitVec 32))
                  (b12 (_ BitVec 32)) (b13 (_ BitVec 32)) (b14 (_ BitVec 32)) (b15 (_ BitVec 32))
                  (b16 (_ BitVec 32)) (b17 (_ BitVec 32)) (b18 (_ BitVec 32)) (b19 (_ BitVec 32))
                  (b20 (_ BitVec 32)) (b21 (_ BitVec 32)) (b22 (_ BitVec 32)) (b23 (_ BitVec 32))
                  (b24 (_ BitVec 32)) (b25 (_ BitVec 32)) (b26 (_ BitVec 32)) (b27 (_ BitVec 32))
                  (b28 (_ BitVec 32)) (b29 (_ BitVec 32)) (b30 (_ BitVec 32)) (b31 (_ BitVec 32))
                  (b32 (_ BitVec 32)) (b33 (_ BitVec 32)) (b34 (_ BitVec 32)) (b35 (_ BitVec 32))
                  (b36 (_ BitVec 32)) (b37 (_ BitVec 32)) (b38 (_ BitVec 32)) (b39 (_ BitVec 32))
                  (b40 (_ BitVec 32)) (b41 (_ BitVec 32)) (b42 (_ BitVec 32)) (b43 (_ BitVec 32))
                  (b44 (_ BitVec 32)) (b45 (_ BitVec 32)) (b46 (_ BitVec 32)) (b47 (_ BitVec 32))
                  (b48 (_ BitVec 32)) (b49 (_ BitVec 32)) (b50 (_ BitVec 32)) (b51 (_ BitVec 32))
                  (b52 (_ BitVec 32)) (b53 (_ BitVec 32)) (b54 (_ BitVec 32)) (b55 (_ BitVec 32))
                  (b56 (_ BitVec 32)) (b57 (_ BitVec 32)) (b58 (_ BitVec 32)) (b59 (_ BitVec 32))
                  (b60 (_ BitVec 32)) (b61 (_ BitVec 32)) (b62 (_ BitVec 32)) (b63 (_ BitVec 32))
                  (c (_ BitVec 32))
                  (scale_a0 (_ BitVec 8)) (scale_a1 (_ BitVec 8)) (scale_a2 (_ BitVec 8)) (scale_a3 (_ BitVec 8))
                  (scale_b0 (_ BitVec 8)) (scale_b1 (_ BitVec 8)) (scale_b2 (_ BitVec 8)) (scale_b3 (_ BitVec 8)))
                 (_ BitVec 32)
  ; Section 4: exact sums of the 16 aligned K=4 groups (block J = groups 4J..4J+3,
  ; scales scale_aJ / scale_bJ), with each group's max raw and max scale raw
  (let ((g0  (g_fix a0  a1  a2  a3  b0  b1  b2  b3  scale_a0 scale_b0))
        (g1  (g_fix a4  a5  a6  a7  b4  b5  b6  b7  scale_a0 scale_b0))
        (g2  (g_fix a8  a9  a10 a11 b8  b9  b10 b11 scale_a0 scale_b0))
        (g3  (g_fix a12 a13 a14 a15 b12 b13 b14 b15 scale_a0 scale_b0))
        (g4  (g_fix a16 a17 a18 a19 b16 b17 b18 b19 scale_a1 scale_b1))
        (g5  (g_fix a20 a21 a22 a23 b20 b21 b22 b23 scale_a1 scale_b1))
        (g6  (g_fix a24 a25 a26 a27 b24 b25 b26 b27 scale_a1 scale_b1))
        (g7  (g_fix a28 a29 a30 a31 b28 b29 b30 b31 scale_a1 scale_b1))
        (g8  (g_fix a32 a33 a34 a35 b32 b33 b34 b35 scale_a2 scale_b2))
        (g9  (g_fix a36 a37 a38 a39 b36 b37 b38 b39 scale_a2 scale_b2))
        (g10 (g_fix a40 a41 a42 a43 b40 b41 b42 b43 scale_a2 scale_b2))
        (g11 (g_fix a44 a45 a46 a47 b44 b45 b46 b47 scale_a2 scale_b2))
        (g12 (g_fix a48 a49 a50 a51 b48 b49 b50 b51 scale_a3 scale_b3))
        (g13 (g_fix a52 a53 a54 a55 b52 b53 b54 b55 scale_a3 scale_b3))
        (g14 (g_fix a56 a57 a58 a59 b56 b57 b58 b59 scale_a3 scale_b3))
        (g15 (g_fix a60 a61 a62 a63 b60 b61 b62 b63 scale_a3 scale_b3))
        ; P: max raw over nonzero products
        (P (smax (smax (smax (smax (g_P a0  a1  a2  a3  b0  b1  b2  b3  scale_a0 scale_b0)
                                   (g_P a4  a5  a6  a7  b4  b5  b6  b7  scale_a0 scale_b0))
                             (smax (g_P a8  a9  a10 a11 b8  b9  b10 b11 scale_a0 scale_b0)
                                   (g_P a12 a13 a14 a15 b12 b13 b14 b15 scale_a0 scale_b0)))
                       (smax (smax (g_P a16 a17 a18 a19 b16 b17 b18 b19 scale_a1 scale_b1)
                                   (g_P a20 a21 a22 a23 b20 b21 b22 b23 scale_a1 scale_b1))
                             (smax (g_P a24 a25 a26 a27 b24 b25 b26 b27 scale_a1 scale_b1)
                                   (g_P a28 a29 a30 a31 b28 b29 b30 b31 scale_a1 scale_b1))))
                 (smax (smax (smax (g_P a32 a33 a34 a35 b32 b33 b34 b35 scale_a2 scale_b2)
                                   (g_P a36 a37 a38 a39 b36 b37 b38 b39 scale_a2 scale_b2))
                             (smax (g_P a40 a41 a42 a43 b40 b41 b42 b43 scale_a2 scale_b2)
                                   (g_P a44 a45 a46 a47 b44 b45 b46 b47 scale_a2 scale_b2)))
                       (smax (smax (g_P a48 a49 a50 a51 b48 b49 b50 b51 scale_a3 scale_b3)
                                   (g_P a52 a53 a54 a55 b52 b53 b54 b55 scale_a3 scale_b3))
                             (smax (g_P a56 a57 a58 a59 b56 b57 b58 b59 scale_a3 scale_b3)
                                   (g_P a60 a61 a62 a63 b60 b61 b62 b63 scale_a3 scale_b3))))))
        ; S: max scale raw over nonzero products
        (S (smax (smax (smax (smax (g_S a0  a1  a2  a3  b0  b1  b2  b3  scale_a0 scale_b0)
                                   (g_S a4  a5  a6  a7  b4  b5  b6  b7  scale_a0 scale_b0))
                             (smax (g_S a8  a9  a10 a11 b8  b9  b10 b11 scale_a0 scale_b0)
                                   (g_S a12 a13 a14 a15 b12 b13 b14 b15 scale_a0 scale_b0)))
                       (smax (smax (g_S a16 a17 a18 a19 b16 b17 b18 b19 scale_a1 scale_b1)
                                   (g_S a20 a21 a22 a23 b20 b21 b22 b23 scale_a1 scale_b1))
                             (smax (g_S a24 a25 a26 a27 b24 b25 b26 b27 scale_a1 scale_b1)
                                   (g_S a28 a29 a30 a31 b28 b29 b30 b31 scale_a1 scale_b1))))
                 (smax (smax (smax (g_S a32 a33 a34 a35 b32 b33 b34 b35 scale_a2 scale_b2)
                                   (g_S a36 a37 a38 a39 b36 b37 b38 b39 scale_a2 scale_b2))
                             (smax (g_S a40 a41 a42 a43 b40 b41 b42 b43 scale_a2 scale_b2)
                                   (g_S a44 a45 a46 a47 b44 b45 b46 b47 scale_a2 scale_b2)))
                       (smax (smax (g_S a48 a49 a50 a51 b48 b49 b50 b51 scale_a3 scale_b3)
                                   (g_S a52 a53 a54 a55 b52 b53 b54 b55 scale_a3 scale_b3))
                             (smax (g_S a56 a57 a58 a59 b56 b57 b58 b59 scale_a3 scale_b3)
                                   (g_S a60 a61 a62 a63 b60 b61 b62 b63 scale_a3 scale_b3))))))
        ; Section 4 / section 1: a NaN in any scale byte that covers K (all four
        ; blocks are covered at K = 64) -> canonical NaN, whatever the elements
        (scale_nan (or (ue4m3_isnan scale_a0) (ue4m3_isnan scale_a1)
                       (ue4m3_isnan scale_a2) (ue4m3_isnan scale_a3)
                       (ue4m3_isnan scale_b0) (ue4m3_isnan scale_b1)
                       (ue4m3_isnan scale_b2) (ue4m3_isnan scale_b3)))
        (c_zero (= (f32_m c) (_ bv0 64)))
        (rC (f32_r c)))
  ; Section 4: each K=16 block's products summed exactly (sums of its groups)
  (let ((k0 (bvadd g0 g1 g2 g3))
        (k1 (bvadd g4 g5 g6 g7))
        (k2 (bvadd g8 g9 g10 g11))
        (k3 (bvadd g12 g13 g14 g15))
        ; Section 4: C-dominant case: C != 0 and rC >= P
        (dom (and (not c_zero) (bvsge rC P))))
  ; Section 4: q = rC - 35 (C-dominant), else q = max(P - 39, S - 35)
  ; (the second term is the scale-anchored floor)
  (let ((q (ite dom
                (bvsub rC (_ bv35 64))
                (smax (bvsub P (_ bv39 64)) (bvsub S (_ bv35 64))))))
  ; C to units of 2^q; then either each K=16 block sum (C-dominant) or each
  ; K=4 group sum (otherwise) truncated to units of 2^q; all added exactly
  (let ((units (bvadd (c_units c q)
                      (ite dom
                           (bvadd (fix_units k0 q) (fix_units k1 q) (fix_units k2 q) (fix_units k3 q))
                           (bvadd (fix_units g0 q)  (fix_units g1 q)  (fix_units g2 q)  (fix_units g3 q)
                                  (fix_units g4 q)  (fix_units g5 q)  (fix_units g6 q)  (fix_units g7 q)
                                  (fix_units g8 q)  (fix_units g9 q)  (fix_units g10 q) (fix_units g11 q)
                                  (fix_units g12 q) (fix_units g13 q) (fix_units g14 q) (fix_units g15 q))))))
    (ite scale_nan #x7FFFFFFF                 ; section 4: NaN scale byte -> canonical NaN
    (ite (f32_isnan c) #x7FFFFFFF             ; section 2 rule 2: NaN C -> canonical NaN
    (ite (f32_isinf c)                        ; section 2 rule 2: (e2m1 has no Inf) C's infinity
         (ite (f32_sign c) #xFF800000 #x7F800000)
    (ite (= P NOTERM)                         ; section 4: every product zero -> C unchanged,
         (ite c_zero #x00000000 c)            ;   except a zero C (either sign) gives +0
         (to_f32_rz units q))))))))))         ; section 4: convert F32 RZ (section 2 rule 7)
