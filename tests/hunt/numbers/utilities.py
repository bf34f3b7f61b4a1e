"""Statistics and small ML utilities, written as textbook code (``make hunt``)."""

import math

import jax.numpy as jnp


def running_mean(xs):
    mean = 0.0
    count = 0
    for v in xs:
        count += 1
        mean += (v - mean) / count
    return mean, count


def ema(xs, decay):
    avg = None
    for v in xs:
        if avg is None:
            avg = v
        else:
            avg = decay * avg + (1 - decay) * v
    return avg


def clip_values(xs, lo, hi):
    if lo > hi:
        raise ValueError("lo must not exceed hi")
    out = xs
    clipped = 0
    for i in range(xs.shape[0]):
        v = xs[i]
        if v < lo:
            out = out.at[i].set(lo)
            clipped += 1
        elif v > hi:
            out = out.at[i].set(hi)
            clipped += 1
    return out, clipped


def clip_by_norm(g, max_norm):
    norm = 0.0
    for v in g:
        norm += v * v
    norm = math.sqrt(norm)
    if norm > max_norm:
        return g * (max_norm / norm), True
    return g, False


def step_decay(lr0, epoch, drop, every):
    return lr0 * drop ** (epoch // every)


def cosine_schedule(step, total, lr_max):
    if step >= total:
        return 0.0
    return 0.5 * lr_max * (1 + math.cos(math.pi * step / total))


def warmup_linear(step, warmup, total):
    if step < warmup:
        return step / warmup
    remaining = total - step
    if remaining <= 0:
        return 0.0
    return remaining / (total - warmup)


def quantize(x, bits):
    levels = 2 ** bits - 1
    scale = 1 / levels
    q = jnp.round(jnp.clip(x, 0, 1) / scale)
    return q * scale, levels


def quantize_signed(xs, bits):
    qmax = (1 << (bits - 1)) - 1
    peak = 0.0
    for v in xs:
        if abs(v) > peak:
            peak = abs(v)
    if peak == 0:
        return xs, 0.0
    step = peak / qmax
    return jnp.round(xs / step) * step, step


def early_stopping(losses, patience):
    best = float("inf")
    wait = 0
    stopped_at = -1
    for epoch, loss in enumerate(losses):
        if loss < best - 1e-4:
            best = loss
            wait = 0
        else:
            wait += 1
            if wait >= patience:
                stopped_at = epoch
                break
    return stopped_at, best


def window_average(xs, k):
    out = []
    for i in range(xs.shape[0] - k + 1):
        s = 0.0
        for j in range(k):
            s += xs[i + j]
        out.append(s / k)
    return out


def softmax_loop(z):
    m = z[0]
    for v in z:
        if v > m:
            m = v
    total = 0.0
    for v in z:
        total += math.exp(v - m)
    return [math.exp(v - m) / total for v in z]


def argmax_first(xs):
    best_i = 0
    best = xs[0]
    for i in range(1, xs.shape[0]):
        if xs[i] > best:
            best = xs[i]
            best_i = i
    return best_i


def histogram_counts(xs, lo, width):
    counts = [0, 0, 0, 0]
    for v in xs:
        b = int((v - lo) // width)
        if 0 <= b < 4:
            counts[b] += 1
    return counts


def minmax_scale(xs):
    lo = xs[0]
    hi = xs[0]
    for v in xs:
        lo = min(lo, v)
        hi = max(hi, v)
    span = hi - lo
    if span == 0:
        return xs * 0
    return (xs - lo) / span


def zscore(xs):
    n = xs.shape[0]
    mean = sum(xs) / n
    var = 0.0
    for v in xs:
        var += (v - mean) ** 2
    std = math.sqrt(var / n)
    try:
        return (xs[0] - mean) / std
    except ZeroDivisionError:
        return 0.0


def sgd_momentum(w0, lr, steps):
    w = w0
    vel = 0.0
    for _ in range(steps):
        grad = 2 * (w - 3)
        vel = 0.9 * vel - lr * grad
        w = w + vel
    return w


def adam_scalar(w0, steps):
    w = w0
    m = 0.0
    v = 0.0
    b1, b2, lr = 0.9, 0.999, 0.1
    for t in range(1, steps + 1):
        g = 2 * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mhat = m / (1 - b1 ** t)
        vhat = v / (1 - b2 ** t)
        w = w - lr * mhat / (math.sqrt(vhat) + 1e-8)
    return w


def topk_indices(xs, k):
    chosen = []
    used = jnp.zeros(xs.shape[0], dtype=bool)
    for _ in range(k):
        best = -1
        for i in range(xs.shape[0]):
            if not used[i] and (best == -1 or xs[i] > xs[best]):
                best = i
        used = used.at[best].set(True)
        chosen.append(best)
    return chosen


def accuracy(pred, label):
    correct = 0
    for p, y in zip(pred, label):
        if p == y:
            correct += 1
    return correct / len(pred)


def confusion(pred, label):
    tp = fp = fn = tn = 0
    for p, y in zip(pred, label):
        if p and y:
            tp += 1
        elif p and not y:
            fp += 1
        elif y:
            fn += 1
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    return tp, fp, fn, tn, precision


def label_smoothing(n_classes, eps, target):
    off = eps / n_classes
    on = 1 - eps + off
    out = []
    for c in range(n_classes):
        out.append(on if c == target else off)
    return out


def dropout_lcg(xs, p, seed):
    state = seed
    out = xs
    kept = 0
    for i in range(xs.shape[0]):
        state = (state * 214013 + 2531011) % 2 ** 24
        if state / 2 ** 24 < p:
            out = out.at[i].set(0.0)
        else:
            out = out.at[i].set(xs[i] / (1 - p))
            kept += 1
    return out, kept


def bucketize(xs, edges):
    ids = []
    for v in xs:
        k = 0
        while k < len(edges) and v >= edges[k]:
            k += 1
        ids.append(k)
    return ids


def cumulative(xs):
    total = 0
    out = []
    for v in xs:
        total = total + v
        out.append(total)
    return out


def run_lengths(xs):
    runs = 0
    longest = 0
    current = 0
    prev = None
    for v in xs:
        if prev is not None and v == prev:
            current += 1
        else:
            runs += 1
            current = 1
        longest = max(longest, current)
        prev = v
    return runs, longest


def median_small(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of empty data")
    mid = n // 2
    if n % 2 == 1:
        return s[mid]
    return (s[mid - 1] + s[mid]) / 2


def gradient_descent_quadratic(x0, lr):
    x = x0
    it = 0
    while abs(2 * (x - 1)) > 1e-3:
        x = x - lr * 2 * (x - 1)
        it += 1
        if it >= 500:
            break
    return x, it


def polynomial_decay(step, total, power):
    frac = 1 - min(step, total) / total
    return 0.1 * frac ** power


def cyclic_lr(step, half_cycle):
    cycle = step // (2 * half_cycle)
    pos = step % (2 * half_cycle)
    if pos < half_cycle:
        frac = pos / half_cycle
    else:
        frac = 2 - pos / half_cycle
    return cycle, 0.001 + 0.009 * frac


def batches_needed(n_items, batch):
    full = n_items // batch
    rest = n_items % batch
    return full + (1 if rest else 0), rest


def weighted_mean(xs, ws):
    num = 0.0
    den = 0
    for x, w in zip(xs, ws):
        num += x * w
        den += w
    if den == 0:
        raise ZeroDivisionError("weights sum to zero")
    return num / den


def variance_two_pass(xs):
    n = 0
    s = 0.0
    for v in xs:
        n += 1
        s += v
    if n < 2:
        return 0.0
    mean = s / n
    ss = 0.0
    for v in xs:
        ss += (v - mean) * (v - mean)
    return ss / (n - 1)


def grad_accumulate(grads, every):
    acc = 0.0
    updates = 0
    applied = []
    for i, g in enumerate(grads):
        acc += g
        if (i + 1) % every == 0:
            applied.append(acc / every)
            acc = 0.0
            updates += 1
    return updates, acc


def exp_decay_steps(lr, floor):
    steps = 0
    while lr > floor:
        lr *= 0.5
        steps += 1
    return steps


def sign_stats(xs):
    pos = neg = zero = 0
    for v in xs:
        if v > 0:
            pos += 1
        elif v < 0:
            neg += 1
        else:
            zero += 1
    print([pos, neg, zero])
    return pos - neg


def bool_flags(xs):
    seen_pos = False
    seen_big = False
    for v in xs:
        if v > 0:
            seen_pos = True
        if v > 10:
            seen_big = True
    return seen_pos + seen_big, seen_pos - seen_big


def int_type_of_count(xs):
    n = 0
    for v in xs:
        if v > 0:
            n += 1
    return type(n) is int, isinstance(n, bool)


def loss_scale(grads_finite, scale):
    for ok in grads_finite:
        if ok:
            scale = scale * 2
        else:
            scale = scale // 2
    return scale


CASES = [
    (running_mean, [(jnp.array([1.0, 2.0, 6.0]),), (jnp.zeros(0),), ([2, 4, 9],)]),
    (ema, [(jnp.array([1.0, 2.0, 3.0]), 0.9), (jnp.array([5.0]), 0.5), (jnp.zeros(0), 0.9)]),
    (clip_values, [(jnp.array([-2.0, 0.5, 3.0]), -1.0, 1.0), (jnp.array([0.1, 0.2]), jnp.float32(0.0),
                                                               jnp.float32(1.0)),
                   (jnp.array([1.0]), 2.0, 1.0)]),
    (clip_by_norm, [(jnp.array([3.0, 4.0]), 1.0), (jnp.array([0.3, 0.4]), 1.0), (jnp.array([3.0, 4.0]),
                                                                                   jnp.float32(10.0))]),
    (step_decay, [(0.1, jnp.int32(25), 0.5, 10), (0.1, jnp.int32(0), jnp.float32(0.5), 10),
                  (1, jnp.int32(30), 2, 10), (0.1, jnp.int32(5), 0.5, 0)]),
    (cosine_schedule, [(jnp.int32(0), 100, 0.1), (jnp.int32(50), 100, 0.1), (jnp.int32(150), 100, 0.1),
                       (jnp.int32(10), jnp.int32(0), 0.1)]),
    (warmup_linear, [(jnp.int32(5), 10, 100), (jnp.int32(50), 10, 100), (jnp.int32(200), 10, 100),
                     (jnp.int32(3), 0, 100)]),
    (quantize, [(jnp.array([0.1, 0.5, 0.9]), 2), (jnp.array([0.3]), jnp.int32(4)), (jnp.array([0.3]), jnp.int32(0)),
                (jnp.array([0.2]), jnp.int32(-1))]),
    (quantize_signed, [(jnp.array([0.5, -1.0, 0.25]), 4), (jnp.zeros(3), 8), (jnp.array([2.0]), jnp.int32(1))]),
    (early_stopping, [(jnp.array([1.0, 0.8, 0.79995, 0.85, 0.9]), 2), (jnp.array([1.0, 0.5, 0.25]), 2),
                      (jnp.zeros(0), 3)]),
    (window_average, [(jnp.array([1.0, 2.0, 3.0, 4.0]), 2), (jnp.array([1.0]), 3)]),
    (softmax_loop, [(jnp.array([1.0, 2.0, 3.0]),), (jnp.array([100.0, 100.0]),)]),
    (argmax_first, [(jnp.array([1.0, 5.0, 5.0, 2.0]),), (jnp.array([3]),), (jnp.array([-1.0, -0.5]),)]),
    (histogram_counts, [(jnp.array([0.1, 0.6, 1.2, 3.9, 5.0, -1.0]), 0.0, 1.0), (jnp.zeros(0), 0.0, 1.0),
                        (jnp.array([0.5, 0.5]), jnp.float32(0.0), jnp.float32(0.25))]),
    (minmax_scale, [(jnp.array([1.0, 3.0, 2.0]),), (jnp.array([2.0, 2.0]),)]),
    (zscore, [(jnp.array([1.0, 2.0, 3.0]),), (jnp.array([4.0, 4.0]),)]),
    (sgd_momentum, [(jnp.float32(0.0), 0.1, 20), (jnp.float32(10.0), jnp.float32(0.01), jnp.int32(5)),
                    (0.0, 0.1, jnp.int32(0))]),
    (adam_scalar, [(jnp.float32(1.0), 10), (jnp.float32(-2.0), jnp.int32(3)), (jnp.float32(1.0), jnp.int32(0))]),
    (topk_indices, [(jnp.array([0.5, 2.0, 1.0, 2.0]), 2), (jnp.array([3.0]), 1), (jnp.array([1.0, 2.0]), 0)]),
    (accuracy, [(jnp.array([1, 0, 1, 1]), jnp.array([1, 1, 1, 0])), (jnp.zeros(0, jnp.int32), jnp.zeros(0, jnp.int32)),
                (jnp.array([2]), jnp.array([2]))]),
    (confusion, [(jnp.array([1, 1, 0, 0, 1]), jnp.array([1, 0, 1, 0, 1])), (jnp.array([0, 0]), jnp.array([1, 0])),
                 (jnp.array([True, False]), jnp.array([True, True]))]),
    (label_smoothing, [(4, jnp.float32(0.1), jnp.int32(2)), (3, 0.0, jnp.int32(5)), (jnp.int32(3), 0.3, 1)]),
    (dropout_lcg, [(jnp.array([1.0, 2.0, 3.0, 4.0]), 0.5, 7), (jnp.array([1.0, 2.0]), 0.0, jnp.int32(3)),
                   (jnp.array([1.0]), jnp.float32(1.0), 1)]),
    (bucketize, [(jnp.array([0.5, 1.5, 10.0]), [1.0, 2.0]), (jnp.array([-1.0]), []), (jnp.array([3, 1]), (1, 3, 5))]),
    (cumulative, [(jnp.array([1, 2, 3]),), (jnp.zeros(0),), ([0.5, 0.25],)]),
    (run_lengths, [(jnp.array([1, 1, 2, 2, 2, 3]),), (jnp.zeros(0),), (jnp.array([7.0]),)]),
    (median_small, [(jnp.array([3, 1, 2]),), (jnp.array([4.0, 1.0, 3.0, 2.0]),), (jnp.zeros(0),)]),
    (gradient_descent_quadratic, [(jnp.float32(5.0), 0.1), (jnp.float32(1.0), 0.1), (jnp.float32(5.0), 1.0),
                                  (jnp.float32(2.0), jnp.float32(0.25))]),
    (polynomial_decay, [(jnp.int32(50), 100, 2), (jnp.int32(150), 100, 2), (jnp.int32(5), jnp.int32(0), 1),
                        (jnp.int32(100), 100, -1)]),
    (cyclic_lr, [(jnp.int32(5), 4), (jnp.int32(13), 4), (jnp.int32(3), 0), (jnp.int32(-3), 4)]),
    (batches_needed, [(jnp.int32(100), 32), (jnp.int32(96), jnp.int32(32)), (jnp.int32(5), 0),
                      (jnp.int32(-5), 3)]),
    (weighted_mean, [(jnp.array([1.0, 2.0]), jnp.array([1, 3])), (jnp.array([1.0, 2.0]), jnp.array([1, -1])),
                     (jnp.array([1.0]), [2])]),
    (variance_two_pass, [(jnp.array([1.0, 2.0, 4.0]),), (jnp.array([3.0]),), ([1, 2, 3, 4],)]),
    (grad_accumulate, [(jnp.array([1.0, 2.0, 3.0, 4.0, 5.0]), 2), (jnp.zeros(0), 3), (jnp.array([1.0]), 1)]),
    (exp_decay_steps, [(jnp.float32(1.0), 1e-3), (jnp.float32(1e-4), 1e-3), (0.5, jnp.float32(0.01))]),
    (sign_stats, [(jnp.array([1.0, -2.0, 0.0, 3.0]),), (jnp.zeros(0),), ([1, 1, -1],)]),
    (bool_flags, [(jnp.array([1.0, 20.0]),), (jnp.array([-1.0, 5.0]),), (jnp.zeros(0),)]),
    (int_type_of_count, [(jnp.array([1.0, -1.0, 2.0]),), (jnp.zeros(0),)]),
    (loss_scale, [(jnp.array([True, True, False]), 1024), (jnp.array([False, False]), 3),
                  (jnp.ones(25, dtype=bool), 65536), (jnp.array([True]), 2.0)]),
]
