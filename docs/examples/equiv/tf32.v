// tf32.v -- hand-written combinational model of the tcgen05.mma datapath
// `dense-tf32` (K = 8, TF32 A and B, F32 C and D), written only from the
// rule text docs/SEMANTICS.md sections 1 and 2 (the shared rule text), as an
// independent counterpart of tf32.smt2.  Section references are to that file.
//
//   D = C + sum_{k<8} A[k] * B[k]
//
// Variants beside this file (identical except where marked VARIANT):
//   tf32-rne.v       final conversion to F32 rounds to nearest, ties to even
//   tf32-no-clamp.v  no -133 clamp of the window (section 7 `window-no-clamp`)
//
// Purely combinational: one `always @*` block that assigns every variable
// before use (no latches), no clocks, no initial blocks, no division/modulo.
// Exponents are held in `integer` (32-bit signed) variables.

module impl(
  input  [31:0] a0, input [31:0] a1, input [31:0] a2, input [31:0] a3,
  input  [31:0] a4, input [31:0] a5, input [31:0] a6, input [31:0] a7,
  input  [31:0] b0, input [31:0] b1, input [31:0] b2, input [31:0] b3,
  input  [31:0] b4, input [31:0] b5, input [31:0] b6, input [31:0] b7,
  input  [31:0] c,
  output [31:0] d
);

  // Section 2.2: canonical F32 special words.
  localparam [31:0] NAN_WORD  = 32'h7FFFFFFF;
  localparam [31:0] PINF_WORD = 32'h7F800000;
  localparam [31:0] NINF_WORD = 32'hFF800000;

  // Section 1: the TF32 fraction bits 12..0 of the F32 container are cleared
  // first (w & 0xFFFFE000); everything below reads the cleared words.
  localparam [31:0] TF32_MASK = 32'hFFFFE000;

  // Section 2.4: the window clamp for tf32 (R = max(R, -133)).
  localparam CLAMP_ON = 1;                                          // VARIANT

  wire [255:0] A = {a7, a6, a5, a4, a3, a2, a1, a0};
  wire [255:0] B = {b7, b6, b5, b4, b3, b2, b1, b0};

  reg [31:0] dr;
  assign d = dr;

  // ---- working variables (all assigned at the top of the block) ----------
  integer k;
  integer i;
  reg [31:0] ta, tb;            // cleared containers
  reg        sa, sb;            // signs
  reg [7:0]  ea, eb;            // biased exponent fields
  reg [9:0]  fa, fb;            // TF32 fraction fields (bits 22..13)
  reg        a_nan, b_nan, a_inf, b_inf, a_zero, b_zero;
  reg [10:0] ma, mb;            // significands m (section 1)
  integer    ra, rb;            // raw exponents r (section 1)

  reg [8*22-1:0] PM;            // product significands |m| = mA*mB, 22 bits each
  reg [7:0]      PSG;           // product signs
  reg [8*32-1:0] PR;            // product raw exponents r = rA+rB (32-bit each)

  reg        sc;                // C sign
  reg [7:0]  ec;                // C biased exponent
  reg [22:0] fc;                // C fraction
  reg        c_nan, c_inf;
  reg [23:0] mc;                // C significand
  integer    rc;                // C raw exponent

  reg        any_nan, pos_inf, neg_inf;
  reg        have_term;
  integer    R, q, pr, s;
  reg [21:0] pm;
  reg [26:0] u;                 // aligned magnitude of one term (units of 2^q)
  reg signed [39:0] acc;        // exact sum of signed units
  reg        rs;                // sign of the sum
  reg [39:0] mag;               // |sum|
  integer    L, E, sh;
  reg [63:0] wide;
  reg [23:0] mant;
  reg [7:0]  expf;

  always @* begin
    // defaults (no latches)
    ta = 32'd0; tb = 32'd0; sa = 1'b0; sb = 1'b0; ea = 8'd0; eb = 8'd0;
    fa = 10'd0; fb = 10'd0; a_nan = 1'b0; b_nan = 1'b0; a_inf = 1'b0;
    b_inf = 1'b0; a_zero = 1'b0; b_zero = 1'b0; ma = 11'd0; mb = 11'd0;
    ra = 0; rb = 0; PM = {8*22{1'b0}}; PSG = 8'd0; PR = {8*32{1'b0}};
    sc = 1'b0; ec = 8'd0; fc = 23'd0; c_nan = 1'b0; c_inf = 1'b0;
    mc = 24'd0; rc = 0; any_nan = 1'b0; pos_inf = 1'b0; neg_inf = 1'b0;
    have_term = 1'b0; R = 0; q = 0; pr = 0; s = 0; pm = 22'd0; u = 27'd0;
    acc = 40'sd0; rs = 1'b0; mag = 40'd0; L = 0; E = 0; sh = 0;
    wide = 64'd0; mant = 24'd0; expf = 8'd0; dr = 32'd0;

    // ---- Section 2.1 / section 1: decode C (F32, F = 23, bias 127) -------
    sc = c[31];
    ec = c[30:23];
    fc = c[22:0];
    c_nan = (ec == 8'hFF) && (fc != 23'd0);
    c_inf = (ec == 8'hFF) && (fc == 23'd0);
    if (ec == 8'd0) begin
      mc = {1'b0, fc};           // subnormal or zero: m = frac
      rc = -126;                 // r = 1 - bias
    end else begin
      mc = {1'b1, fc};           // normal: m = (1 << 23) | frac
      rc = ec - 127;             // r = exp - bias
    end
    // (value exponent e = rc - 23)

    // Section 2.2: specials contributed by C.
    if (c_nan) any_nan = 1'b1;
    if (c_inf && !sc) pos_inf = 1'b1;
    if (c_inf &&  sc) neg_inf = 1'b1;

    // Section 2.4: C takes part in the window maximum only if C != 0.
    if (!c_inf && !c_nan && mc != 24'd0) begin
      have_term = 1'b1;
      R = rc;
    end

    // ---- per product k ---------------------------------------------------
    for (k = 0; k < 8; k = k + 1) begin
      // Section 1: clear TF32 fraction bits 12..0 first, then classify.
      ta = A[32*k +: 32] & TF32_MASK;
      tb = B[32*k +: 32] & TF32_MASK;
      sa = ta[31]; ea = ta[30:23]; fa = ta[22:13];
      sb = tb[31]; eb = tb[30:23]; fb = tb[22:13];
      a_nan  = (ea == 8'hFF) && (fa != 10'd0);
      b_nan  = (eb == 8'hFF) && (fb != 10'd0);
      a_inf  = (ea == 8'hFF) && (fa == 10'd0);
      b_inf  = (eb == 8'hFF) && (fb == 10'd0);
      a_zero = (ea == 8'd0)  && (fa == 10'd0);
      b_zero = (eb == 8'd0)  && (fb == 10'd0);
      // Section 1: m and raw exponent r (F = 10, bias 127).
      if (ea == 8'd0) begin ma = {1'b0, fa}; ra = -126;     end
      else            begin ma = {1'b1, fa}; ra = ea - 127; end
      if (eb == 8'd0) begin mb = {1'b0, fb}; rb = -126;     end
      else            begin mb = {1'b1, fb}; rb = eb - 127; end

      // Section 2.2: special values, before any finite arithmetic.
      if (a_nan || b_nan) any_nan = 1'b1;                  // NaN operand
      else if ((a_inf && b_zero) || (b_inf && a_zero))
        any_nan = 1'b1;                                    // Inf x 0
      else if (a_inf || b_inf) begin                       // infinite product
        if (sa ^ sb) neg_inf = 1'b1; else pos_inf = 1'b1;  // sign of product
      end

      // Section 2.3: exact product m = mA*mB, r = rA+rB (e = r - 20).
      PM[22*k +: 22] = ma * mb;
      PSG[k]         = sa ^ sb;
      PR[32*k +: 32] = ra + rb;

      // Section 2.4: window maximum over products with m != 0.  (Products
      // with an Inf/NaN factor are finite-path garbage; the special result
      // overrides them below.)
      if (ma != 11'd0 && mb != 11'd0 && !(ea == 8'hFF) && !(eb == 8'hFF)) begin
        if (!have_term || (ra + rb) > R) R = ra + rb;
        have_term = 1'b1;
      end
    end

    // Section 2.4: clamp below at -133 (tf32/bf16 only), quantum q = R - 25.
    if (CLAMP_ON != 0 && R < -133) R = -133;
    q = R - 25;

    // ---- Sections 2.5 and 2.6: align every term to units of 2^q ----------
    // Product: value = m * 2^(r - 20); units = m * 2^(r - 20 - q)
    //        = m * 2^(r - R + 5).  Left shifts (<= 5) exact; right shifts
    // truncate the magnitude (toward zero for both signs).
    for (k = 0; k < 8; k = k + 1) begin
      pm = PM[22*k +: 22];
      pr = PR[32*k +: 32];
      s  = pr - R + 5;
      if (s >= 0) u = {5'd0, pm} << s;
      else        u = {5'd0, pm} >> (0 - s);     // far below: becomes 0
      if (PSG[k]) acc = acc - {13'd0, u};
      else        acc = acc + {13'd0, u};
    end
    // C: value = m * 2^(rc - 23); units = m * 2^(rc - R + 2).
    s = rc - R + 2;
    if (s >= 0) u = {3'd0, mc} << s;
    else        u = {3'd0, mc} >> (0 - s);
    if (sc) acc = acc - {13'd0, u};
    else    acc = acc + {13'd0, u};

    // ---- Section 2.7: convert units * 2^q to F32, truncation (RZ) ---------
    rs  = acc[39];
    mag = rs ? (40'd0 - acc) : acc;
    L = 0;                                   // bitlen(|units|)
    for (i = 0; i < 40; i = i + 1)
      if (mag[i]) L = i + 1;
    E = L - 1 + q;

    if (mag == 40'd0) begin
      dr = 32'h00000000;                     // 0 -> +0
    end else if (E > 127) begin
      dr = rs ? NINF_WORD : PINF_WORD;       // overflow -> signed infinity
    end else if (E >= -126) begin
      // keep the top 24 significant bits (truncate), exponent E
      wide = {24'd0, mag};
      if (L > 24) wide = wide >> (L - 24);
      else        wide = wide << (24 - L);
      mant = wide[23:0];
      expf = E + 127;
      dr = {rs, expf, mant[22:0]};
    end else begin
      // subnormal: truncate to units of 2^-149; zero -> +0
      sh = q + 149;
      wide = {24'd0, mag};
      if (sh >= 0) wide = wide << sh;
      else         wide = wide >> (0 - sh);
      if (wide[22:0] == 23'd0) dr = 32'h00000000;
      else                     dr = {rs, 8'd0, wide[22:0]};
    end

    // ---- Section 2.2: specials override the finite result ----------------
    if (any_nan || (pos_inf && neg_inf)) dr = NAN_WORD;
    else if (pos_inf)                    dr = PINF_WORD;
    else if (neg_inf)                    dr = NINF_WORD;
    else if (!have_term)                 dr = 32'h00000000;   // 2.4: +0
  end

endmodule
