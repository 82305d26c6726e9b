"""Every string of the app in English and 简体中文. Values in braces are filled in by the page.

Keys: `nav_*` navigation, `<page>_*` one page's text, the rest shared. Keep both languages side by side.
"""

TEXT: dict[str, dict[str, str]] = {
    # -- shared ----------------------------------------------------------------------------------------
    "app_name": {"en": "Fused Softmax Explorer", "zh": "融合 Softmax 探索器"},
    "nav_home": {"en": "Home", "zh": "首页"},
    "nav_memory": {"en": "Memory traffic", "zh": "内存读写"},
    "nav_padding": {"en": "Padding chain", "zh": "填充链"},
    "nav_schedule": {"en": "Row schedule", "zh": "行调度"},
    "nav_gpu": {"en": "GPU & occupancy", "zh": "GPU 与占用率"},
    "nav_bench": {"en": "Benchmark", "zh": "基准测试"},
    "nav_memory_blurb": {
        "en": "Count what every step reads and writes: the naive five kernels against one fused kernel.",
        "zh": "逐步数清每一步读写了多少:朴素的五个内核 vs 一个融合内核。"},
    "nav_padding_blurb": {
        "en": "Follow one row through the kernel with its real values — and see why padding uses −inf.",
        "zh": "用真实数值跟着一行走完内核——看看为什么填充值要用 −inf。"},
    "nav_schedule_blurb": {
        "en": "Which program handles which row: the strided tl.range loop, the uneven tail, the SMs.",
        "zh": "哪个 program 处理哪一行:跨步的 tl.range 循环、不均匀的尾部、SM 上的分布。"},
    "nav_gpu_blurb": {
        "en": "Registers, shared memory, programs per SM: the launch plan from the real compiled kernel.",
        "zh": "寄存器、共享内存、每个 SM 的 program 数:来自真实编译内核的启动方案。"},
    "nav_bench_blurb": {
        "en": "GB/s against a plain copy: live on a GPU, recorded runs with their provenance otherwise.",
        "zh": "与纯拷贝对比的 GB/s:有 GPU 时现场测,没有时展示带出处的记录。"},
    "sidebar_gpu": {"en": "GPU: {name}", "zh": "GPU:{name}"},
    "sidebar_no_gpu": {"en": "No GPU: Triton's interpreter on the CPU", "zh": "无 GPU:在 CPU 上用 Triton 解释器运行"},
    "about": {"en": "About", "zh": "关于"},
    "about_text": {
        "en": "An interactive explainer of the fused softmax kernel from the Triton tutorials. Every number is "
              "computed by `softmax_core`, measured, or read from a recorded run with its provenance.",
        "zh": "Triton 教程中融合 softmax 内核的交互式讲解。所有数字都由 `softmax_core` 计算、现场测量,"
              "或读自带有出处的记录。"},
    "banner_gpu": {
        "en": "**GPU: {name}** — {sms} SMs, {regs:,} registers and {smem:,} B of shared memory per SM, warp size "
              "{warp}. Kernels run on it.",
        "zh": "**GPU:{name}** —— {sms} 个 SM,每个 SM {regs:,} 个寄存器、{smem:,} B 共享内存,warp 大小 {warp}。"
              "内核在它上面运行。"},
    "banner_cpu": {
        "en": "**No GPU on this machine:** kernels run in Triton's interpreter on the CPU. Launch plans come from "
              "compiling the kernel for a GPU from the catalog (default: {gpu}); timings on the Benchmark page are "
              "recorded runs, labelled with the GPU they ran on.",
        "zh": "**本机没有 GPU:** 内核在 CPU 上由 Triton 解释器执行。启动方案来自为目录中的 GPU(默认:{gpu})"
              "离线编译内核;基准测试页的耗时是记录下来的结果,并标明了运行的 GPU。"},
    "url_clamped": {
        "en": "The link asked for {name} = {raw}, which is out of range: using {used}.",
        "zh": "链接中的 {name} = {raw} 超出范围:改用 {used}。"},
    "url_ignored": {
        "en": "The link's value {name} = {raw} was not understood and is ignored: using {used}.",
        "zh": "无法理解链接中的 {name} = {raw},已忽略:使用 {used}。"},
    "play": {"en": "Play", "zh": "播放"},
    "pause": {"en": "Pause", "zh": "暂停"},
    "step": {"en": "Step", "zh": "步骤"},
    "computing": {"en": "Compiling / running the kernel…", "zh": "正在编译 / 运行内核……"},
    "dtype": {"en": "dtype", "zh": "数据类型"},
    "gpu_choice": {"en": "GPU", "zh": "GPU"},
    "gpu_live": {"en": "this machine", "zh": "本机"},
    "gpu_catalog": {"en": "catalog", "zh": "目录"},
    "rows_M": {"en": "Rows M", "zh": "行数 M"},
    "cols_N": {"en": "Columns N", "zh": "列数 N"},
    "kernel_caption": {"en": "softmax_core/tutorial_kernel.py — the kernel that ran", "zh": "softmax_core/tutorial_kernel.py —— 实际运行的内核"},
    "table_caption": {"en": "The numbers behind the picture", "zh": "图背后的数字"},
    "error_generic": {"en": "This combination could not be computed: {error}", "zh": "无法计算这个组合:{error}"},

    # -- home --------------------------------------------------------------------------------------------
    "home_lead": {
        "en": "Softmax turns a row of scores into probabilities: subtract the row's maximum, exponentiate, "
              "divide by the sum. Written in PyTorch it is five separate kernels, and each one sends the whole "
              "matrix through the GPU's main memory (DRAM) again. A **fused** Triton kernel loads each row once, "
              "does all five steps on chip, and writes the result once. This app takes that kernel apart — "
              "running the real kernel, not a drawing of it.",
        "zh": "Softmax 把一行分数变成概率:减去该行最大值、取指数、再除以总和。用 PyTorch 写就是五个独立的内核,"
              "每一个都要把整个矩阵在 GPU 主存(DRAM)里再搬一趟。**融合**的 Triton 内核每行只读一次,在片上完成"
              "全部五步,再一次性写回。本应用把这个内核拆开来看——运行的是真正的内核,而不是示意图。"},
    "home_why_title": {"en": "Why fusion pays", "zh": "融合为什么划算"},
    "home_why": {
        "en": "Softmax does little arithmetic per byte, so its speed is set by memory traffic. For the chapter's "
              "{M:,} × {N:,} float32 matrix the naive version moves **{naive}**, the fused kernel **{fused}**: "
              "**{speedup:.2f}×** less traffic, so up to {speedup:.2f}× faster while bandwidth is the limit.",
        "zh": "Softmax 每个字节的计算量很小,速度由内存读写决定。对本章的 {M:,} × {N:,} float32 矩阵,朴素实现搬运 "
              "**{naive}**,融合内核只搬运 **{fused}**:读写量少 **{speedup:.2f}×**,在带宽受限时最多快 {speedup:.2f}×。"},
    "home_naive_bytes": {"en": "naive: bytes moved", "zh": "朴素:搬运字节"},
    "home_fused_bytes": {"en": "fused: bytes moved", "zh": "融合:搬运字节"},
    "home_predicted": {"en": "predicted speedup", "zh": "预测加速比"},
    "home_measured": {
        "en": "Measured: on **{gpu}** ({date}) the fused kernel (`{provider}`) ran **{speedup:.2f}×** faster than "
              "the naive one at M = {M:,}, N = {N:,}.",
        "zh": "实测:在 **{gpu}** 上({date}),融合内核(`{provider}`)在 M = {M:,}、N = {N:,} 时比朴素实现快 "
              "**{speedup:.2f}×**。"},
    "home_no_measured": {
        "en": "No recorded benchmark run is present yet, so only the prediction is shown.",
        "zh": "还没有基准测试记录,所以这里只显示预测值。"},
    "home_story_title": {"en": "The story, one page per step", "zh": "故事线:每页一步"},
    # -- memory traffic ----------------------------------------------------------------------------------
    "memory_title": {"en": "Memory traffic: why the naive softmax is slow", "zh": "内存读写:朴素 softmax 为什么慢"},
    "memory_intro": {
        "en": "In the naive softmax every line is its own kernel: it reads its input from DRAM and writes its result "
              "back, and the next line reads it again. Softmax does so little arithmetic per element that the time "
              "goes into moving bytes. Step through the five kernels, then the fused one, and watch the bytes add up.",
        "zh": "朴素 softmax 的每一行代码都是一个独立的内核:从 DRAM 读入输入,把结果写回去,下一行再把它读一遍。"
              "softmax 每个元素的计算量很少,时间几乎都花在搬运字节上。逐个走过五个内核,再看融合内核,观察字节数如何累加。"},
    "memory_step_max": {"en": "1 max", "zh": "1 求最大值"},
    "memory_step_subtract": {"en": "2 subtract", "zh": "2 减最大值"},
    "memory_step_exp": {"en": "3 exp", "zh": "3 取指数"},
    "memory_step_sum": {"en": "4 sum", "zh": "4 求和"},
    "memory_step_divide": {"en": "5 divide", "zh": "5 相除"},
    "memory_step_fused": {"en": "fused kernel", "zh": "融合内核"},
    "memory_naive": {"en": "naive (5 kernels)", "zh": "朴素(5 个内核)"},
    "memory_fused": {"en": "fused (1 kernel)", "zh": "融合(1 个内核)"},
    "memory_frame_naive": {
        "en": "**Kernel {k} of {n}:** `{code}` reads {read:,} elements and writes {written:,} — {bytes}. "
              "Naive total so far: **{total}**.",
        "zh": "**第 {k} / {n} 个内核:** `{code}` 读 {read:,} 个元素、写 {written:,} 个 —— {bytes}。"
              "朴素实现累计:**{total}**。"},
    "memory_frame_fused": {
        "en": "**The fused kernel:** each row is loaded once ({read:,} elements) and stored once ({written:,}), "
              "everything in between stays on chip — **{bytes}** against the naive **{naive}**.",
        "zh": "**融合内核:** 每行只加载一次({read:,} 个元素)、写回一次({written:,} 个),中间结果都留在片上 —— "
              "**{bytes}**,而朴素实现是 **{naive}**。"},
    "memory_x": {"en": "MB moved through DRAM", "zh": "经过 DRAM 的数据量(MB)"},
    "memory_y": {"en": "implementation", "zh": "实现"},
    "memory_color": {"en": "kernel", "zh": "内核"},
    "memory_chart_title": {"en": "Bytes read + written, per kernel", "zh": "每个内核读写的字节数"},
    "memory_naive_caption": {"en": "softmax_core/launchers.py — naive_softmax, one kernel per line",
                             "zh": "softmax_core/launchers.py —— naive_softmax,每行一个内核"},
    "memory_totals_title": {"en": "The whole account", "zh": "完整账目"},
    "memory_col_step": {"en": "kernel", "zh": "内核"},
    "memory_col_code": {"en": "code", "zh": "代码"},
    "memory_col_read": {"en": "elements read", "zh": "读取元素数"},
    "memory_col_written": {"en": "elements written", "zh": "写入元素数"},
    "memory_col_bytes_read": {"en": "bytes read", "zh": "读取字节"},
    "memory_col_bytes_written": {"en": "bytes written", "zh": "写入字节"},
    "memory_formula": {
        "en": "The chapter's count for M = {M:,}, N = {N:,}: naive reads 5MN + 2M and writes 3MN + 2M elements, "
              "**8MN + 4M = {naive:,}**; fused reads MN and writes MN, **2MN = {fused:,}**. "
              "Each element is {elt} bytes.",
        "zh": "按本章的算法,M = {M:,}、N = {N:,}:朴素实现读 5MN + 2M、写 3MN + 2M 个元素,**8MN + 4M = {naive:,}**;"
              "融合内核读 MN、写 MN,**2MN = {fused:,}**。每个元素 {elt} 字节。"},
    "memory_predicted": {"en": "predicted speedup", "zh": "预测加速比"},
    "memory_predicted_help": {
        "en": "naive bytes ÷ fused bytes: the speedup if both kernels run at the same memory bandwidth.",
        "zh": "朴素字节数 ÷ 融合字节数:假设两者以相同内存带宽运行时的加速比。"},
    "memory_measured": {"en": "measured speedup", "zh": "实测加速比"},
    "memory_measured_help": {
        "en": "naive time ÷ fused time ({provider}) on {gpu}, {date}, at M = {M:,}, N = {N:,}.",
        "zh": "在 {gpu} 上({date}),M = {M:,}、N = {N:,} 时,朴素耗时 ÷ 融合耗时({provider})。"},
    "memory_measured_caption": {
        "en": "Measured on {gpu} ({date}) at the recorded size closest to yours: M = {M:,}, N = {N:,}.",
        "zh": "实测于 {gpu}({date}),取最接近你所选尺寸的记录:M = {M:,}、N = {N:,}。"},
    "memory_no_measured": {
        "en": "No benchmark data with both the naive and the fused kernel for this dtype yet (run one on the "
              "Benchmark page on a GPU, or add a recorded run).",
        "zh": "还没有同时包含朴素与融合内核、且为此数据类型的基准数据(可在有 GPU 时到基准测试页运行,或加入记录)。"},
    "memory_curve_title": {"en": "Predicted vs measured, for every recorded N", "zh": "各个 N 下的预测与实测"},
    "memory_speedup_axis": {"en": "speedup over naive (×)", "zh": "相对朴素实现的加速比(×)"},
    "memory_kind": {"en": "figure", "zh": "指标"},
    "memory_curve_chart": {"en": "Fused vs naive speedup", "zh": "融合 vs 朴素的加速比"},
    "memory_curve_caption": {
        "en": "Measured on {gpu} ({date}), M = {M:,}. Where the measured speedup differs from the byte count, "
              "something other than DRAM traffic matters: launch overhead at small N, caches, or arithmetic.",
        "zh": "实测于 {gpu}({date}),M = {M:,}。实测与字节数预测不一致的地方,说明 DRAM 读写之外的因素在起作用:"
              "小 N 时的启动开销、缓存,或计算本身。"},
    # -- padding chain -----------------------------------------------------------------------------------
    "padding_title": {"en": "Padding chain: why the mask fills with −inf", "zh": "填充链:为什么 mask 要填 −inf"},
    "padding_intro": {
        "en": "Triton blocks have a power-of-two number of lanes, so a row of N values is padded up to BLOCK_SIZE. "
              "The padded lanes must not change the answer. Step one row through the kernel: every value below was "
              "**recorded by the real kernel** while it ran (its TRACE switch). Then break it and see the damage.",
        "zh": "Triton 的 block 大小必须是 2 的幂,所以 N 个值的一行会被补齐到 BLOCK_SIZE。补出来的位置不能改变结果。"
              "跟着一行走过内核:下面每个数值都是**真实内核运行时记录下来的**(TRACE 开关)。然后把它弄坏,看看后果。"},
    "padding_N_help": {"en": "Row length; BLOCK_SIZE is the next power of two.", "zh": "行长;BLOCK_SIZE 取下一个 2 的幂。"},
    "padding_rows": {"en": "Rows in the matrix", "zh": "矩阵行数"},
    "padding_rows_help": {"en": "A few rows, so that a stray store has neighbours to hit.",
                          "zh": "几行就够,这样越界写入才有相邻行可以踩到。"},
    "padding_break": {"en": "Break it", "zh": "把它弄坏"},
    "padding_variant_correct": {"en": "correct kernel", "zh": "正确的内核"},
    "padding_variant_pad_zero": {"en": "pad with 0.0", "zh": "用 0.0 填充"},
    "padding_variant_no_store_mask": {"en": "no store mask", "zh": "store 不加 mask"},
    "padding_variant_all_neg_inf": {"en": "an all −inf row", "zh": "整行都是 −inf"},
    "padding_row": {"en": "Row to follow", "zh": "要跟踪的行"},
    "padding_zoom": {"en": "Zoom on the end of the row", "zh": "放大到行尾"},
    "padding_zoom_help": {"en": "Show only the last real lanes and the padding.", "zh": "只显示最后几个真实位置和填充部分。"},
    "padding_step_label": {"en": "Step (load → max → subtract → exp → sum → divide → store)",
                           "zh": "步骤(加载 → 最大值 → 相减 → 指数 → 求和 → 相除 → 写回)"},
    "padding_block": {
        "en": "N = {N:,} → BLOCK_SIZE = next_power_of_2(N) = **{B:,}**: **{pad:,}** padded lanes per row. "
              "The launch plan for {gpu} gives {programs} program(s) for these rows.",
        "zh": "N = {N:,} → BLOCK_SIZE = next_power_of_2(N) = **{B:,}**:每行 **{pad:,}** 个填充位置。"
              "针对 {gpu} 的启动方案为这些行启动 {programs} 个 program。"},
    "padding_frame_load": {
        "en": "**Load.** `tl.arange(0, BLOCK_SIZE)` makes {B:,} lanes, but the row has {N:,} values. The mask "
              "`col_offsets < n_cols` switches off the last {pad:,} lanes; instead of reading memory they take `other`.",
        "zh": "**加载。** `tl.arange(0, BLOCK_SIZE)` 生成 {B:,} 个位置,但这一行只有 {N:,} 个值。mask "
              "`col_offsets < n_cols` 关掉最后 {pad:,} 个位置;它们不读内存,而是取 `other` 的值。"},
    "padding_frame_load_correct": {"en": "Here `other` is −inf (dark grey in the strip).",
                                   "zh": "这里 `other` 是 −inf(条带中的深灰色)。"},
    "padding_frame_load_pad_zero": {"en": "In this broken version `other` is 0.0 — an innocent-looking number.",
                                    "zh": "在这个坏掉的版本里,`other` 是 0.0——一个看起来人畜无害的数。"},
    "padding_frame_load_all_neg_inf": {"en": "Row {row} of the input is −inf everywhere, so every lane holds −inf.",
                                       "zh": "输入的第 {row} 行全是 −inf,所以每个位置都是 −inf。"},
    "padding_frame_load_no_store_mask": {"en": "The load is still masked; the damage comes at the store.",
                                         "zh": "加载仍然带 mask;问题出在写回时。"},
    "padding_frame_max": {"en": "**Max.** `tl.max` reduces all {B:,} lanes to one number: **{max}**.",
                          "zh": "**最大值。** `tl.max` 把全部 {B:,} 个位置归约成一个数:**{max}**。"},
    "padding_frame_max_correct": {"en": "−inf is the identity of max: a padded lane can never win.",
                                  "zh": "−inf 是 max 的单位元:填充位置永远不会胜出。"},
    "padding_frame_max_pad_zero": {
        "en": "The padded zeros take part: the real values' max is {real_max}, the block's max is {max}. "
              "(Softmax ignores a shift, so this alone does no harm.)",
        "zh": "填充的 0 也参与了比较:真实值的最大值是 {real_max},整个 block 的最大值是 {max}。"
              "(softmax 不受平移影响,所以单看这一步还没坏。)"},
    "padding_frame_max_all_neg_inf": {"en": "Every lane is −inf, so the max is −inf too.",
                                      "zh": "每个位置都是 −inf,所以最大值也是 −inf。"},
    "padding_frame_subtract": {
        "en": "**Subtract.** `row - row_max`: the largest value becomes 0 and all others negative, so exp cannot overflow.",
        "zh": "**相减。** `row - row_max`:最大值变成 0,其余都是负数,exp 就不会溢出。"},
    "padding_frame_subtract_correct": {"en": "−inf − max is still −inf.", "zh": "−inf − max 仍然是 −inf。"},
    "padding_frame_subtract_pad_zero": {
        "en": "The padded lanes now hold 0 − max = {pad_value}: ordinary numbers — nothing marks them as padding any more.",
        "zh": "填充位置现在是 0 − max = {pad_value}:普通的数——再也看不出它们是填充了。"},
    "padding_frame_subtract_all_neg_inf": {
        "en": "−inf − (−inf) has no answer: IEEE arithmetic gives NaN, in every lane.",
        "zh": "−inf − (−inf) 没有定义:IEEE 浮点运算给出 NaN,每个位置都是。"},
    "padding_frame_exp": {"en": "**Exp.** `tl.exp` maps every lane into [0, 1] (the max lane becomes exactly 1).",
                          "zh": "**指数。** `tl.exp` 把每个位置映射到 [0, 1](最大值的位置恰好为 1)。"},
    "padding_frame_exp_correct": {"en": "exp(−inf) is exactly 0: the padded lanes are now zeros.",
                                  "zh": "exp(−inf) 恰好等于 0:填充位置变成了 0。"},
    "padding_frame_exp_pad_zero": {"en": "Each of the {pad:,} padded lanes now holds {pad_value} instead of 0.",
                                   "zh": "{pad:,} 个填充位置现在每个都是 {pad_value},而不是 0。"},
    "padding_frame_exp_all_neg_inf": {"en": "exp(NaN) is NaN.", "zh": "exp(NaN) 还是 NaN。"},
    "padding_frame_sum": {"en": "**Sum.** `tl.sum` adds all {B:,} lanes: **{sum}**.",
                          "zh": "**求和。** `tl.sum` 把全部 {B:,} 个位置相加:**{sum}**。"},
    "padding_frame_sum_correct": {"en": "The padded zeros add nothing.", "zh": "填充的 0 对总和没有影响。"},
    "padding_frame_sum_pad_zero": {"en": "**{pad_sum}** of it comes from the {pad:,} padded lanes: the denominator is polluted.",
                                   "zh": "其中 **{pad_sum}** 来自 {pad:,} 个填充位置:分母被污染了。"},
    "padding_frame_sum_all_neg_inf": {"en": "A sum with a NaN in it is NaN.", "zh": "含有 NaN 的和仍是 NaN。"},
    "padding_frame_divide": {
        "en": "**Divide.** `numerator / denominator`: every lane over the sum. The row's {N:,} real lanes now add up to **{out_sum}**.",
        "zh": "**相除。** `numerator / denominator`:每个位置除以总和。该行 {N:,} 个真实位置之和现在是 **{out_sum}**。"},
    "padding_frame_divide_correct": {"en": "Padded lanes: 0 / sum = 0.", "zh": "填充位置:0 / sum = 0。"},
    "padding_frame_divide_pad_zero": {"en": "Not 1: every probability is too small, because the sum counted the padding.",
                                      "zh": "不是 1:每个概率都偏小,因为总和把填充也算进去了。"},
    "padding_frame_divide_all_neg_inf": {
        "en": "NaN / NaN is NaN: the whole row is NaN — the same answer torch.softmax gives for an all −inf row. "
              "Attention code that masks whole rows wants zeros instead (a \"safe\" softmax).",
        "zh": "NaN / NaN 还是 NaN:整行都是 NaN——和 torch.softmax 对整行 −inf 给出的结果一样。"
              "把整行都 mask 掉的注意力代码通常想要全 0(所谓 \"safe\" softmax)。"},
    "padding_frame_store": {
        "en": "**Store.** The output row lives at addresses {start:,}–{end:,} (counted in elements from the matrix's start).",
        "zh": "**写回。** 输出行位于地址 {start:,}–{end:,}(从矩阵起点按元素计)。"},
    "padding_frame_store_correct": {"en": "`mask=mask` writes the {N:,} real lanes only; the {pad:,} padded lanes never reach memory.",
                                    "zh": "`mask=mask` 只写回 {N:,} 个真实位置;{pad:,} 个填充位置根本不会写入内存。"},
    "padding_frame_store_pad_zero": {"en": "The mask keeps the padding out of memory — but the real lanes are already wrong.",
                                     "zh": "mask 挡住了填充位置——但真实位置的值已经错了。"},
    "padding_frame_store_no_store_mask": {
        "en": "Without the mask all {B:,} lanes are written: **{n_stray:,} values land outside the row**, at addresses {first:,}–{last:,}.",
        "zh": "没有 mask,全部 {B:,} 个位置都会写出:**{n_stray:,} 个值落在这一行之外**,地址 {first:,}–{last:,}。"},
    "padding_stray_rows": {"en": "Those are the first elements of row {hit}: another program's output.",
                           "zh": "那是第 {hit} 行开头的元素:别的 program 的输出。"},
    "padding_stray_past": {
        "en": "{past:,} of them are past the end of the matrix — memory this tensor does not own "
              "(on a GPU: someone else's data, or an illegal-address crash).",
        "zh": "其中 {past:,} 个超出了矩阵末尾——这块内存不属于该张量(在 GPU 上:会覆盖别人的数据,或触发非法地址错误)。"},
    "padding_no_padding": {"en": "N is a power of two here: there are no padded lanes, so this break changes nothing. Try another N.",
                           "zh": "这里 N 是 2 的幂:没有填充位置,所以这种破坏不起作用。换一个 N 试试。"},
    "padding_state_real": {"en": "row value", "zh": "行内数值"},
    "padding_state_pad_neg_inf": {"en": "padding: −inf", "zh": "填充:−inf"},
    "padding_state_pad_zero": {"en": "padding: 0", "zh": "填充:0"},
    "padding_state_pad_nonzero": {"en": "padding: not 0 (harmful)", "zh": "填充:非 0(有害)"},
    "padding_state_nan": {"en": "NaN", "zh": "NaN"},
    "padding_state_stored": {"en": "stored", "zh": "已写回"},
    "padding_state_not_stored": {"en": "masked: not stored", "zh": "被 mask:未写回"},
    "padding_state_stray": {"en": "stored outside the row!", "zh": "写到了行外!"},
    "padding_lane": {"en": "lane", "zh": "位置"},
    "padding_value": {"en": "value", "zh": "数值"},
    "padding_state": {"en": "lane state", "zh": "位置状态"},
    "padding_chart_title": {"en": "Row {row}: every lane of the block", "zh": "第 {row} 行:block 中的每个位置"},
    "padding_metric_max": {"en": "row max", "zh": "行最大值"},
    "padding_metric_sum": {"en": "row sum", "zh": "行总和"},
    "padding_metric_out_sum": {"en": "output sum", "zh": "输出之和"},
    "padding_metric_out_sum_help": {"en": "Sum of the row's stored probabilities: 1 when the kernel is right.",
                                    "zh": "该行写回的概率之和:内核正确时为 1。"},
    "padding_metric_err": {"en": "max error vs torch", "zh": "与 torch 的最大误差"},
    "padding_metric_err_help": {"en": "Largest |kernel output − torch.softmax| over the row's stored values.",
                                "zh": "该行写回值与 torch.softmax 之差的最大绝对值。"},
    "padding_in_row": {"en": "in the row", "zh": "在行内"},
    "padding_edge_caption": {"en": "Lanes at the edge of the row, at this step", "zh": "本步骤中行尾附近的位置"},
    "padding_memory_title": {"en": "What the whole launch wrote", "zh": "整个启动写了什么"},
    "padding_memory_chart": {"en": "Output buffer, address by address (the matrix, then guard space)",
                             "zh": "输出缓冲区,逐个地址(先是矩阵,后面是保护区)"},
    "padding_address": {"en": "address (elements from the matrix's start)", "zh": "地址(从矩阵起点按元素计)"},
    "padding_guard": {"en": "past the end", "zh": "超出末尾"},
    "padding_mem_right": {"en": "right (= torch)", "zh": "正确(= torch)"},
    "padding_mem_nan_like_torch": {"en": "NaN, as torch gives", "zh": "NaN,与 torch 一致"},
    "padding_mem_wrong": {"en": "wrong", "zh": "错误"},
    "padding_mem_past_end": {"en": "written past the end", "zh": "写到了末尾之外"},
    "padding_mem_unwritten": {"en": "not written", "zh": "未写入"},
    "padding_launch_correct": {
        "en": "All {rows} rows match torch.softmax, and nothing was written past the matrix ({oob} stray writes).",
        "zh": "全部 {rows} 行都与 torch.softmax 一致,没有任何写入超出矩阵({oob} 个越界写入)。"},
    "padding_launch_padzero": {"en": "{wrong} of {rows} rows are wrong: each row's sum was polluted by its own padding.",
                               "zh": "{rows} 行中有 {wrong} 行是错的:每一行的总和都被自己的填充污染了。"},
    "padding_launch_neginf": {
        "en": "Row {row} is NaN, as torch.softmax's is; the other rows are untouched — the damage stays in its row.",
        "zh": "第 {row} 行是 NaN,与 torch.softmax 一致;其他行不受影响——问题只留在这一行。"},
    "padding_launch_nomask": {
        "en": "Rows corrupted: **{wrong}**. **{oob:,}** values were written past the end of the matrix. Triton's "
              "interpreter runs the {programs} program(s) one after another, so whether a stray write lands on a "
              "neighbour before or after that neighbour's own store depends on program order. On a GPU they run at "
              "the same time: which write wins is a race, different from run to run.",
        "zh": "被破坏的行:**{wrong}**。有 **{oob:,}** 个值写到了矩阵末尾之外。Triton 解释器按顺序逐个运行这 "
              "{programs} 个 program,所以越界写入是落在相邻行自己写回之前还是之后,取决于 program 的顺序。"
              "在 GPU 上它们同时运行:谁最后写入是一场竞争,每次运行都可能不同。"},
    "padding_col_row": {"en": "row", "zh": "行"},
    "padding_col_program": {"en": "program", "zh": "program"},
    "padding_col_ok": {"en": "= torch?", "zh": "= torch?"},
    # -- row schedule ------------------------------------------------------------------------------------
    "limiter_registers": {"en": "registers", "zh": "寄存器"},
    "limiter_shared_memory": {"en": "shared memory", "zh": "共享内存"},
    "limiter_rows": {"en": "the number of rows", "zh": "行数"},
    "schedule_title": {"en": "Row schedule: who handles which row", "zh": "行调度:谁处理哪一行"},
    "schedule_intro": {
        "en": "The kernel launches a fixed number of **persistent programs** P — as many as fit on the GPU at once — "
              "and each one walks the rows with a stride: program p handles rows p, p + P, p + 2P, … in its "
              "`tl.range` loop. The map below was **recorded by the real kernel** (each program wrote down which "
              "rows it handled, and in which trip through its loop). Step through the loop, and watch the uneven tail.",
        "zh": "内核启动固定数量的**常驻 program** P——GPU 能同时容纳多少就启动多少——每个 program 跨步地遍历各行:"
              "program p 在它的 `tl.range` 循环中依次处理第 p、p + P、p + 2P……行。下面的映射是**真实内核记录的**"
              "(每个 program 写下了它处理了哪些行、在循环的第几次)。逐次走过循环,留意不均匀的尾部。"},
    "schedule_N_help": {"en": "Row length: it sets the kernel's registers and shared memory, hence programs per SM.",
                        "zh": "行长:决定内核的寄存器和共享内存用量,从而决定每个 SM 能放几个 program。"},
    "schedule_gpu_help": {"en": "Starts on the RTX 4060 Ti, the card the chapter's author measured on: it has few "
                                "SMs, so a few rows are enough to show the strided walk.",
                          "zh": "默认是本章作者实测用的 RTX 4060 Ti:它的 SM 不多,几十行就能看出跨步遍历。"},
    "schedule_rows": {"en": "Rows (traced)", "zh": "行数(追踪)"},
    "schedule_no_fit": {"en": "The seed's kernel cannot launch here: {explanation} Pick a shorter row or another GPU "
                              "(the GPU & occupancy page explains why).",
                        "zh": "本章的内核在这里无法启动:{explanation} 请选更短的行或换一块 GPU(原因见“GPU 与占用率”页)。"},
    "schedule_auto": {"en": "P from the plan", "zh": "P 取自启动方案"},
    "schedule_auto_help": {"en": "Off: choose the number of programs yourself.", "zh": "关闭后可以自己选择 program 数量。"},
    "schedule_P": {"en": "Programs P (num_programs)", "zh": "program 数 P(num_programs)"},
    "schedule_stages": {"en": "num_stages", "zh": "num_stages"},
    "schedule_stages_help": {"en": "Loop iterations the compiler may overlap (the plan's choice is the default).",
                             "zh": "编译器可以重叠的循环迭代数(默认取启动方案的值)。"},
    "schedule_load": {"en": "Load time (× math)", "zh": "加载耗时(× 计算)"},
    "schedule_load_help": {"en": "For the pipeline picture: how long a row takes to arrive from DRAM, in units of the "
                                 "time its math takes. An illustration, not a measurement.",
                           "zh": "用于流水线示意图:一行从 DRAM 到达所需时间,以该行计算时间为单位。只是示意,不是测量值。"},
    "schedule_plan": {
        "en": "On **{gpu}**: {sms} SMs × {per_sm} program(s) per SM — the limit is set by {limiter}. For these {rows} "
              "rows the plan launches **{planned}** program(s) (never more than there are rows). At full size, "
              "M = {M:,} rows, it launches {full:,} programs: {per_program:.2f} rows each on average.",
        "zh": "在 **{gpu}** 上:{sms} 个 SM × 每个 SM {per_sm} 个 program——限制来自{limiter}。对这 {rows} 行,"
              "启动方案启动 **{planned}** 个 program(不会多于行数)。全尺寸 M = {M:,} 行时,启动 {full:,} 个 program:"
              "平均每个处理 {per_program:.2f} 行。"},
    "schedule_step_label": {"en": "Step (launch → loop iterations → done)", "zh": "步骤(启动 → 各次循环 → 完成)"},
    "schedule_frame_launch": {
        "en": "**Launch.** {P} programs start at once. Each reads its own id, `row_start = tl.program_id(0)`, and "
              "the grid size, `row_step = tl.num_programs(0)` = {P}.",
        "zh": "**启动。** {P} 个 program 同时开始。每个读取自己的编号 `row_start = tl.program_id(0)` 和网格大小 "
              "`row_step = tl.num_programs(0)` = {P}。"},
    "schedule_frame_first": {
        "en": "**Loop iteration 0** (of {K}): every program takes the row with its own number — rows {first}…{last}.",
        "zh": "**第 0 次循环**(共 {K} 次):每个 program 处理与自己编号相同的行——第 {first}…{last} 行。"},
    "schedule_frame_iteration": {
        "en": "**Loop iteration {it}** (of {K}): {count} program(s) each take one row — rows {first}…{last}, a stride "
              "of {step} apart from the previous trip. {idle} program(s) have no row left and have finished.",
        "zh": "**第 {it} 次循环**(共 {K} 次):{count} 个 program 各处理一行——第 {first}…{last} 行,与上一次相隔 "
              "{step} 行。{idle} 个 program 已经没有剩余的行,提前结束。"},
    "schedule_frame_done": {
        "en": "**Done.** {rows} rows on {P} programs: {n_most} program(s) handled {most} row(s), {n_fewest} handled "
              "{fewest}. The loop ran {K} time(s); the programs were busy {util:.0%} of those slots — the rest is "
              "the uneven tail.",
        "zh": "**完成。** {rows} 行分给 {P} 个 program:{n_most} 个 program 处理了 {most} 行,{n_fewest} 个处理了 "
              "{fewest} 行。循环跑了 {K} 次;这些时间槽中有 {util:.0%} 在干活——其余就是不均匀的尾部。"},
    "schedule_program": {"en": "program", "zh": "program"},
    "schedule_iteration": {"en": "loop iteration", "zh": "循环次数"},
    "schedule_grid_title": {"en": "Rows of the matrix, coloured by the program that handled them",
                            "zh": "矩阵的各行,按处理它的 program 着色"},
    "schedule_by_program_title": {"en": "The same rows by program (x) and loop iteration (y)",
                                  "zh": "同样的行,按 program(横轴)和循环次数(纵轴)排列"},
    "schedule_col_row": {"en": "row", "zh": "行"},
    "schedule_now_caption": {"en": "Rows handled in iteration {it}", "zh": "第 {it} 次循环处理的行"},
    "schedule_sm_title": {"en": "Programs on SMs", "zh": "SM 上的 program"},
    "schedule_sm": {"en": "SM", "zh": "SM"},
    "schedule_slot": {"en": "slot on the SM", "zh": "SM 上的槽位"},
    "schedule_sm_chart": {"en": "Where the programs run (pale: waiting for a free slot)",
                          "zh": "program 在哪里运行(浅色:等待空闲槽位)"},
    "schedule_sm_text": {
        "en": "{P} program(s) on {used} of the {sms} SMs, up to {per_sm} per SM, in {waves} wave(s). The picture "
              "assumes the block scheduler deals programs out in order, one per SM per round — the usual behaviour, "
              "though the hardware promises no order. With P at most SMs × programs per SM (the plan's choice) every "
              "program starts at once and none waits.",
        "zh": "{P} 个 program 分布在 {sms} 个 SM 中的 {used} 个上,每个 SM 最多 {per_sm} 个,共 {waves} 波。"
              "此图假设块调度器按顺序轮流把 program 发给各个 SM——这是常见行为,但硬件并不保证顺序。"
              "只要 P 不超过 SM 数 × 每 SM 的 program 数(启动方案的选择),所有 program 都能同时开始,没有谁需要等待。"},
    "schedule_col_rows": {"en": "rows handled", "zh": "处理行数"},
    "schedule_col_which": {"en": "which rows", "zh": "哪些行"},
    "schedule_pipe_title": {"en": "num_stages: loading the next row while computing this one",
                            "zh": "num_stages:算这一行的同时加载下一行"},
    "schedule_phase_load": {"en": "load (DRAM → chip)", "zh": "加载(DRAM → 片上)"},
    "schedule_phase_compute": {"en": "max, exp, sum, divide", "zh": "最大值、指数、求和、相除"},
    "schedule_phase_store": {"en": "store", "zh": "写回"},
    "schedule_phase": {"en": "phase", "zh": "阶段"},
    "schedule_pipe_serial": {"en": "num_stages = 1", "zh": "num_stages = 1"},
    "schedule_pipe_staged": {"en": "num_stages = {stages}", "zh": "num_stages = {stages}"},
    "schedule_row_n": {"en": "row {n}", "zh": "第 {n} 行"},
    "schedule_time": {"en": "time (units of one row's math; schematic)", "zh": "时间(以一行的计算时间为单位;示意)"},
    "schedule_pipe_chart": {"en": "One program's loop, without and with pipelining", "zh": "一个 program 的循环:不流水 vs 流水"},
    "schedule_pipe_text": {
        "en": "With one stage a program waits for every row to arrive before it can compute: its {n} rows finish at "
              "t = {serial:g}. With num_stages = {stages} the loads of the next rows are already in flight while this "
              "row is computed, so they finish at t = {staged:g} (a load taking {load}× as long as the math). Each "
              "stage holds a row in shared memory — that is why the plan uses 4 stages only on GPUs with lots of it. "
              "The tl.range loop allows this because rows are independent.",
        "zh": "只有一级时,program 必须等每一行到达后才能计算:{n} 行在 t = {serial:g} 完成。num_stages = {stages} 时,"
              "计算这一行的同时,后面几行的加载已经在路上,于是在 t = {staged:g} 完成(假设加载耗时是计算的 {load} 倍)。"
              "每一级都要在共享内存里缓存一行——所以启动方案只在共享内存充裕的 GPU 上使用 4 级。"
              "tl.range 循环之所以能这样做,是因为各行相互独立。"},
    # -- GPU & occupancy ---------------------------------------------------------------------------------
    "gpu_title": {"en": "GPU & occupancy: how many programs fit", "zh": "GPU 与占用率:能塞下多少个 program"},
    "gpu_intro": {
        "en": "The wrapper does not guess its grid. It compiles the kernel, asks how many **registers** per thread and "
              "how many bytes of **shared memory** per program it needs, divides each SM's supply by that, and takes "
              "the smaller answer: the number of programs that fit on one **SM** at once. Here those figures come from "
              "the real compiled kernel — on this machine's GPU, or compiled offline for a GPU from the catalog.",
        "zh": "wrapper 并不瞎猜网格大小。它先编译内核,问清楚每个线程要多少**寄存器**、每个 program 要多少字节**共享内存**,"
              "再用每个 SM 的资源总量去除,取较小者:一个 **SM** 同时能放下的 program 数。这里的数字来自真实编译出的内核——"
              "本机 GPU 上的,或者为目录中的 GPU 离线编译的。"},
    "gpu_cc": {"en": "compute capability", "zh": "计算能力"},
    "gpu_props_title": {"en": "The GPU", "zh": "GPU 参数"},
    "gpu_col_figure": {"en": "figure", "zh": "参数"},
    "gpu_col_value": {"en": "value", "zh": "数值"},
    "gpu_col_source": {"en": "source", "zh": "出处"},
    "gpu_fig_name": {"en": "name", "zh": "名称"},
    "gpu_fig_arch": {"en": "architecture", "zh": "架构"},
    "gpu_fig_multiprocessor_count": {"en": "SMs (multiprocessor_count)", "zh": "SM 数(multiprocessor_count)"},
    "gpu_fig_max_num_regs": {"en": "registers per SM (max_num_regs)", "zh": "每 SM 寄存器数(max_num_regs)"},
    "gpu_fig_max_shared_mem": {"en": "shared memory per program (max_shared_mem)", "zh": "每 program 共享内存上限(max_shared_mem)"},
    "gpu_fig_warp_size": {"en": "warp size", "zh": "warp 大小"},
    "gpu_fig_memory_bandwidth_gbps": {"en": "memory bandwidth", "zh": "显存带宽"},
    "gpu_fig_l2_mib": {"en": "L2 cache", "zh": "L2 缓存"},
    "gpu_amd_note": {
        "en": "AMD: a wavefront has {warp} lanes, and registers come from each SIMD's own file, so occupancy follows "
              "the CDNA rule below, not the seed's NVIDIA formula.",
        "zh": "AMD:一个 wavefront 有 {warp} 个 lane,寄存器来自每个 SIMD 自己的寄存器堆,所以占用率按下面的 CDNA 规则计算,"
              "而不是本章的 NVIDIA 公式。"},
    "gpu_plan_title": {"en": "Launch plan for {M:,} × {N:,} {dtype}", "zh": "{M:,} × {N:,} {dtype} 的启动方案"},
    "gpu_n_regs": {"en": "registers / thread", "zh": "每线程寄存器"},
    "gpu_shared": {"en": "shared memory / program", "zh": "每 program 共享内存"},
    "gpu_spills": {"en": "spilled registers", "zh": "溢出的寄存器"},
    "gpu_programs_per_sm": {"en": "programs per SM", "zh": "每 SM program 数"},
    "gpu_grid": {"en": "grid (num_programs)", "zh": "网格(num_programs)"},
    "gpu_limiter": {"en": "limited by", "zh": "受限于"},
    "gpu_help_block": {"en": "The row, padded to a power of two: one program holds one whole row.",
                       "zh": "补齐到 2 的幂的一行:一个 program 持有一整行。"},
    "gpu_help_warp": {"en": "A warp is {warp} threads that execute together; more warps share the row's values.",
                      "zh": "一个 warp 是一起执行的 {warp} 个线程;warp 越多,分摊一行数值的线程越多。"},
    "gpu_help_stages": {"en": "Software-pipeline depth of the tl.range loop (the seed: 4 if shared memory per SM > 200,000 B, else 2).",
                        "zh": "tl.range 循环的软件流水深度(本章:每 SM 共享内存 > 200,000 B 时取 4,否则取 2)。"},
    "gpu_help_regs": {"en": "Registers: the fastest storage, private to each thread; an SM's register file is shared by all the programs on it.",
                      "zh": "寄存器:最快的存储,每个线程私有;一个 SM 的寄存器堆由其上所有 program 共享。"},
    "gpu_help_shared": {"en": "Shared memory (SRAM): on-chip memory a program's threads share; the pipeline stages buffer rows in it.",
                        "zh": "共享内存(SRAM):同一 program 的线程共享的片上内存;流水线的各级在其中缓存行。"},
    "gpu_help_spills": {"en": "Registers the compiler could not keep and moved to slow local memory: a sign the row is too big for one program.",
                        "zh": "编译器放不下、挪到慢速本地内存的寄存器:说明一行对一个 program 来说太大了。"},
    "gpu_help_sm": {"en": "SM (streaming multiprocessor): one of the GPU's cores; it runs several programs at once if their registers and shared memory fit.",
                    "zh": "SM(流式多处理器):GPU 的一个核心;只要寄存器和共享内存够用,它能同时运行多个 program。"},
    "gpu_resources_how": {"en": "Where n_regs and shared memory come from: {how}.", "zh": "n_regs 和共享内存的来源:{how}。"},
    "gpu_does_not_fit": {"en": "**The seed's kernel cannot launch here** (Triton raises OutOfResources). {explanation}",
                         "zh": "**本章的内核在这里无法启动**(Triton 会抛出 OutOfResources)。{explanation}"},
    "gpu_formula_title": {"en": "The seed's arithmetic, with these numbers", "zh": "本章的算式,代入这些数字"},
    "gpu_no_shared": {"en": "no limit (the kernel uses no shared memory)", "zh": "无限制(内核不使用共享内存)"},
    "gpu_formula_text": {
        "en": "Registers: each program needs n_regs × warp size × num_warps of them. Shared memory: each program needs "
              "its buffer. The scarcer resource decides; and never launch more programs than rows. In the kernel, "
              "BLOCK_SIZE sets how many values a program holds, and the num_stages of its tl.range loop how many "
              "rows it keeps in flight in shared memory.",
        "zh": "寄存器:每个 program 需要 n_regs × warp 大小 × num_warps 个。共享内存:每个 program 需要自己的缓冲区。"
              "谁更紧缺谁说了算(木桶效应);program 数也不会超过行数。在内核里,BLOCK_SIZE 决定一个 program 持有多少个值,"
              "tl.range 循环的 num_stages 决定它在共享内存里同时缓存几行。"},
    "gpu_occupancy_caption": {"en": "softmax_core/tutorial_plan.py — occupancy(), the one place this formula lives",
                              "zh": "softmax_core/tutorial_plan.py —— occupancy(),这个公式唯一的实现处"},
    "gpu_calc_title": {"en": "Occupancy calculator", "zh": "占用率计算器"},
    "gpu_vary": {"en": "Vary", "zh": "改变"},
    "gpu_vary_regs": {"en": "registers per thread", "zh": "每线程寄存器数"},
    "gpu_vary_block": {"en": "BLOCK_SIZE (compiles each size)", "zh": "BLOCK_SIZE(逐个编译)"},
    "gpu_what_if_regs": {"en": "What if the kernel used this many registers per thread?", "zh": "如果内核每线程用这么多寄存器会怎样?"},
    "gpu_what_if_help": {"en": "Starts at the compiled kernel's real count.", "zh": "初始值是编译后内核的真实用量。"},
    "gpu_line_regs": {"en": "registers allow", "zh": "寄存器允许"},
    "gpu_line_sram": {"en": "shared memory allows", "zh": "共享内存允许"},
    "gpu_line_programs": {"en": "programs per SM", "zh": "每 SM program 数"},
    "gpu_marker_what_if": {"en": "what if", "zh": "假设"},
    "gpu_marker_plan": {"en": "this plan", "zh": "当前方案"},
    "gpu_x_regs": {"en": "registers per thread", "zh": "每线程寄存器数"},
    "gpu_x_block": {"en": "BLOCK_SIZE", "zh": "BLOCK_SIZE"},
    "gpu_y_programs": {"en": "programs per SM", "zh": "每 SM program 数"},
    "gpu_limit": {"en": "limit", "zh": "限制"},
    "gpu_calc_chart": {"en": "Programs that fit on one SM", "zh": "一个 SM 能放下的 program 数"},
    "gpu_compiling_sweep": {"en": "Compiling the kernel for {n} block sizes (cached after the first time)…",
                            "zh": "正在为 {n} 种 block 大小编译内核(首次之后会缓存)……"},
    "gpu_sweep_failed": {"en": "These block sizes could not be compiled: {sizes}", "zh": "以下 block 大小无法编译:{sizes}"},
    "gpu_what_if_text": {
        "en": "With **{regs}** registers per thread (the compiled kernel uses {real}): **{programs}** program(s) per SM, "
              "limited by {limiter}, grid of {grid:,}. The table lists where the count changes.",
        "zh": "每线程 **{regs}** 个寄存器时(编译后的内核实际用 {real} 个):每 SM **{programs}** 个 program,受限于{limiter},"
              "网格大小 {grid:,}。表格列出了数量发生变化的位置。"},
    "gpu_calc_caption": {
        "en": "More programs per SM is not automatically faster: it hides memory latency, but this kernel is limited by "
              "bandwidth once enough bytes are in flight.",
        "zh": "每 SM 的 program 越多并不一定越快:它能掩盖访存延迟,但只要在途的字节足够多,这个内核就受限于带宽。"},
    "gpu_long_title": {"en": "When a row no longer fits", "zh": "当一行放不下时"},
    "gpu_long_fits": {
        "en": "At N = {N:,} the whole padded row fits one program. Raise N (or pick a GPU with less shared memory): "
              "the shared memory a program needs grows with BLOCK_SIZE, and at some point not even one program fits on an SM.",
        "zh": "N = {N:,} 时,补齐后的整行放得进一个 program。把 N 调大(或换一块共享内存更少的 GPU):program 需要的共享内存随 "
              "BLOCK_SIZE 增长,总有一刻连一个 program 都放不进一个 SM。"},
    "gpu_long_fails": {
        "en": "At N = {N:,} one program needs **{shared:,} B** of shared memory, and the GPU offers {limit:,} B: the seed's "
              "kernel stops here with OutOfResources. A row this long has to be walked in tiles.",
        "zh": "N = {N:,} 时,一个 program 需要 **{shared:,} B** 共享内存,而 GPU 只有 {limit:,} B:本章的内核到此为止,"
              "抛出 OutOfResources。这么长的行只能分块(tile)处理。"},
    "gpu_tuned_path": {"en": "What `softmax_core.softmax` does for this shape — the **{path}** path: {reason}",
                       "zh": "`softmax_core.softmax` 对这个形状的做法——**{path}** 路径:每块 {block:,} 个值,"
                             "{warps} 个 warp,{programs:,} 个 program。库给出的说明(英文):{reason}"},
    "explain_fits": {
        "en": "Registers allow {reg} programs per SM; {sram}. So {per_sm} per SM × {sms} SMs; {why}: {programs:,} programs.",
        "zh": "寄存器允许每个 SM 放 {reg} 个 program;{sram}。所以每 SM {per_sm} 个 × {sms} 个 SM;{why}:共 {programs:,} 个 program。"},
    "explain_shared": {"en": "shared memory allows {sram} ({limit:,} B // {shared:,} B)",
                       "zh": "共享内存允许 {sram} 个({limit:,} B // {shared:,} B)"},
    "explain_no_shared": {"en": "the kernel uses no shared memory, so it sets no limit",
                          "zh": "内核不使用共享内存,所以共享内存不构成限制"},
    "explain_why_rows": {"en": "there are fewer rows than program slots, so every row gets its own program",
                         "zh": "行数少于 program 槽位,所以每行都有自己的 program"},
    "explain_why_registers": {"en": "registers run out first", "zh": "寄存器先用完"},
    "explain_why_shared_memory": {"en": "shared memory runs out first", "zh": "共享内存先用完"},
    "explain_no_fit_shared": {
        "en": "One program needs {shared:,} B of shared memory for a row padded to {block:,} values, but {gpu} offers "
              "{limit:,} B: not even one program fits.",
        "zh": "一个 program 要为补齐到 {block:,} 个值的一行准备 {shared:,} B 共享内存,而 {gpu} 只提供 {limit:,} B:"
              "连一个 program 都放不下。"},
    "explain_no_fit_regs": {
        "en": "One program needs {regs} registers × {threads} threads, more than the {limit:,} registers of one SM.",
        "zh": "一个 program 需要 {regs} 个寄存器 × {threads} 个线程,超过了一个 SM 的 {limit:,} 个寄存器。"},
    "gpu_path_rows": {"en": "whole rows", "zh": "整行"},
    "gpu_path_tiled": {"en": "tiled (online softmax)", "zh": "分块(在线 softmax)"},
    "gpu_path_split": {"en": "split row (programs share a row)", "zh": "拆分行(多个 program 共享一行)"},
    "gpu_asm_title": {"en": "Compiled code: PTX / SASS", "zh": "编译产物:PTX / SASS"},
    "gpu_asm_toggle": {"en": "Compile and show this plan's kernel", "zh": "编译并显示该方案的内核"},
    "gpu_asm_caption": {"en": "First {shown:,} of {total:,} lines; download for the rest.", "zh": "前 {shown:,} 行,共 {total:,} 行;完整内容请下载。"},
    "gpu_asm_download": {"en": "Download {name}", "zh": "下载 {name}"},
    "gpu_asm_none": {"en": "The compiler returned no assembly for this target.", "zh": "编译器没有为该目标返回汇编。"},
    # -- benchmark ---------------------------------------------------------------------------------------
    "bench_title": {"en": "Benchmark: GB/s against a plain copy", "zh": "基准测试:与纯拷贝对比 GB/s"},
    "bench_intro": {
        "en": "How fast is fast? A softmax must read the matrix once and write it once, so the best it can do is "
              "the speed of a plain **copy** of the same bytes — the roofline drawn dashed. Each kernel is checked "
              "against torch before it is timed; one that fails at a size (like the seed's kernel at long rows) is "
              "listed with its reason, not hidden.",
        "zh": "多快才算快?softmax 至少要把矩阵读一遍、写一遍,所以它的上限就是对同样字节做一次**纯拷贝**的速度——图中的虚线。"
              "每个内核在计时前都先和 torch 对答案;在某个尺寸上失败的(比如本章内核遇到长行)会连同原因一起列出,而不是藏起来。"},
    "bench_no_harness": {"en": "The benchmark harness (softmax_core.bench) is not available in this checkout.",
                         "zh": "本代码中没有可用的基准测试工具(softmax_core.bench)。"},
    "bench_formula": {
        "en": "**GB/s = bytes ÷ time.** The bytes are the ones the kernel must move: forward reads x and writes y, "
              "2·M·N·element size (for 4096 × 1024 float32: {example}); backward reads y and dy and writes dx, 3·M·N·"
              "element size. The naive softmax moves far more than that, so its GB/s by this count is low: the count "
              "is the work that had to be done, not the traffic it caused.",
        "zh": "**GB/s = 字节数 ÷ 时间。** 字节数是内核必须搬运的量:前向读 x、写 y,2·M·N·元素大小(4096 × 1024 float32 为 "
              "{example});反向读 y 和 dy、写 dx,3·M·N·元素大小。朴素 softmax 实际搬运的远不止这些,所以按这个口径它的 "
              "GB/s 很低:这个口径衡量的是必须完成的工作量,而不是它实际造成的读写。"},
    "bench_direction": {"en": "Pass", "zh": "方向"},
    "bench_dir_forward": {"en": "forward", "zh": "前向"},
    "bench_dir_backward": {"en": "backward", "zh": "反向"},
    "bench_gbps": {"en": "GB/s", "zh": "GB/s"},
    "bench_provider": {"en": "implementation", "zh": "实现"},
    "bench_chart_title": {"en": "Throughput by row length (dashed: copy roofline)", "zh": "不同行长的吞吐(虚线:拷贝上限)"},
    "bench_chart_caption": {"en": "Points: median; vertical bars: from the slowest to the fastest sample.",
                            "zh": "点:中位数;竖线:从最慢到最快的样本。"},
    "bench_nothing_ok": {"en": "Nothing was measured successfully in this pass.", "zh": "这个方向上没有成功测到任何结果。"},
    "bench_table_gbps": {"en": "GB/s (median)", "zh": "GB/s(中位数)"},
    "bench_table_ratio": {"en": "Fraction of copy bandwidth, same run", "zh": "占拷贝带宽的比例(同一次运行)"},
    "bench_failed": {"en": "Not measured: {n} case(s), with reasons", "zh": "未测得:{n} 项,附原因"},
    "bench_provenance": {"en": "Provenance: where and how this was measured", "zh": "出处:在哪里、如何测得"},
    "bench_col_key": {"en": "item", "zh": "项目"},
    "bench_col_value": {"en": "value", "zh": "内容"},
    "bench_csv": {"en": "Download CSV", "zh": "下载 CSV"},
    "bench_live_title": {"en": "Run a sweep on this GPU", "zh": "在这块 GPU 上跑一遍"},
    "bench_N_from": {"en": "N from", "zh": "N 起点"},
    "bench_N_to": {"en": "N to", "zh": "N 终点"},
    "bench_providers": {"en": "Implementations", "zh": "实现"},
    "bench_directions": {"en": "Passes", "zh": "方向"},
    "bench_run": {"en": "Run benchmark", "zh": "开始测试"},
    "bench_starting": {"en": "Starting…", "zh": "开始……"},
    "bench_waiting": {"en": "Another session's benchmark is using the GPU: waiting for it to finish, so that both get "
                            "honest timings…",
                      "zh": "另一个会话的基准测试正在使用 GPU:等它结束,这样双方的计时都准确……"},
    "bench_waited": {"en": "This run waited {seconds:.1f} s for another session's benchmark to finish.",
                     "zh": "本次运行等待了 {seconds:.1f} 秒,直到另一个会话的基准测试结束。"},
    "bench_cpu_title": {"en": "No GPU: the same story on this CPU", "zh": "没有 GPU:在这台 CPU 上看同样的道理"},
    "bench_cpu_intro": {
        "en": "A live GPU sweep needs a GPU. What this machine can show honestly is the memory-traffic story: the naive "
              "five-step softmax against torch.softmax (one pass over each row) and a plain copy, timed with a wall "
              "clock. Small matrices fit in the CPU's caches, where traffic is cheap; grow M × N and watch the gap.",
        "zh": "现场的 GPU 测试需要 GPU。这台机器能如实展示的是内存读写的道理:朴素的五步 softmax、torch.softmax(每行一遍)"
              "和纯拷贝,用墙钟计时。小矩阵装得进 CPU 缓存,读写很便宜;把 M × N 调大,看差距如何变化。"},
    "bench_cpu_Nmax": {"en": "Largest N", "zh": "最大 N"},
    "bench_cpu_run": {"en": "Time it on this CPU", "zh": "在这台 CPU 上计时"},
    "bench_cpu_measured": {"en": "measured naive ÷ torch time", "zh": "实测 朴素 ÷ torch 耗时"},
    "bench_cpu_predicted": {"en": "predicted (bytes ratio)", "zh": "预测(字节比)"},
    "bench_cpu_story": {
        "en": "Predicted vs measured on this CPU. Where they differ, caches are doing part of the work: the naive "
              "version's intermediate tensors may never leave the cache when the matrix is small.",
        "zh": "这台 CPU 上的预测与实测。两者不一致的地方,是缓存分担了工作:矩阵较小时,朴素实现的中间张量可能根本没离开缓存。"},
    "bench_recorded_title": {"en": "Recorded runs", "zh": "记录的运行结果"},
    "bench_no_recording": {
        "en": "No recorded benchmark run is present (looked in `{path}`). Runs recorded on a GPU appear here, with "
              "their provenance, once they are saved there.",
        "zh": "还没有基准测试记录(查找位置:`{path}`)。在 GPU 上记录的运行结果保存到那里后,会连同出处显示在这里。"},
    "bench_pick_run": {"en": "Run", "zh": "运行记录"},
    "bench_recorded_on": {
        "en": "Recorded on **{gpu}**, {date} — torch {torch}, triton {triton}; M = {M}, {dtype}.",
        "zh": "记录于 **{gpu}**,{date}——torch {torch},triton {triton};M = {M},{dtype}。"},
}
