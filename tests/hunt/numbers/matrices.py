"""Dynamic programming on small arrays and matrix/vector loops, written as textbook code (``make
hunt``)."""

import math

import jax.numpy as jnp


def lis_length(xs):
    n = xs.shape[0]
    best = [1] * n
    for i in range(n):
        for j in range(i):
            if xs[j] < xs[i] and best[j] + 1 > best[i]:
                best[i] = best[j] + 1
    return max(best) if n else 0


def knapsack(weights, values, cap):
    table = [0] * (cap + 1)
    for i in range(weights.shape[0]):
        w = weights[i]
        v = values[i]
        for c in range(cap, 0, -1):
            if w <= c and table[c - w] + v > table[c]:
                table[c] = table[c - w] + v
    return table[cap]


def coin_change_ways(amount):
    coins = (1, 2, 5)
    ways = [1] + [0] * 10
    for c in coins:
        for a in range(c, 11):
            ways[a] += ways[a - c]
    return ways[amount]


def max_subarray(xs):
    best = xs[0]
    current = 0
    for v in xs:
        current = max(v, current + v)
        best = max(best, current)
    return best


def matmul_loops(a, b):
    n, m = a.shape
    m2, p = b.shape
    if m != m2:
        raise ValueError("shapes do not match")
    out = jnp.zeros((n, p), dtype=a.dtype)
    for i in range(n):
        for j in range(p):
            s = 0
            for k in range(m):
                s += a[i, k] * b[k, j]
            out = out.at[i, j].set(s)
    return out


def det_gauss(m):
    a = m.astype(jnp.float32)
    n = a.shape[0]
    det = 1.0
    for col in range(n):
        pivot = col
        for r in range(col + 1, n):
            if abs(a[r, col]) > abs(a[pivot, col]):
                pivot = r
        if a[pivot, col] == 0:
            return 0.0
        if pivot != col:
            tmp = a[col]
            a = a.at[col].set(a[pivot])
            a = a.at[pivot].set(tmp)
            det = -det
        det = det * a[col, col]
        for r in range(col + 1, n):
            f = a[r, col] / a[col, col]
            a = a.at[r].set(a[r] - f * a[col])
    return det


def trace_and_symmetric(m):
    t = 0
    sym = True
    n = m.shape[0]
    for i in range(n):
        t += m[i, i]
        for j in range(i + 1, n):
            if m[i, j] != m[j, i]:
                sym = False
    return t, sym


def power_iteration(m, iters):
    v = jnp.ones(m.shape[0])
    lam = 0.0
    for _ in range(iters):
        w = m @ v
        norm = math.sqrt(float(w @ w))
        if norm == 0:
            return 0.0
        v = w / norm
        lam = v @ (m @ v)
    return lam


def jacobi_solve(a, b, tol):
    x = jnp.zeros_like(b)
    for it in range(200):
        new = x
        for i in range(b.shape[0]):
            s = b[i]
            for j in range(b.shape[0]):
                if j != i:
                    s = s - a[i, j] * x[j]
            new = new.at[i].set(s / a[i, i])
        diff = jnp.max(jnp.abs(new - x))
        x = new
        if diff < tol:
            return x, it + 1
    return x, -1


def prefix_sum_queries(xs, queries):
    prefix = [0]
    for v in xs:
        prefix.append(prefix[-1] + v)
    answers = []
    for lo, hi in queries:
        answers.append(prefix[hi] - prefix[lo])
    return answers


def longest_positive_run(xs):
    best = 0
    run = 0
    for v in xs:
        if v > 0:
            run += 1
            if run > best:
                best = run
        else:
            run = 0
    return best


def stairs_ways(n):
    a, b = 1, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def partitions_count(n):
    p = [1] + [0] * n
    for k in range(1, n + 1):
        for m in range(k, n + 1):
            p[m] += p[m - k]
    return p[n]


def rod_cutting(prices, length):
    best = [0] * (length + 1)
    for L in range(1, length + 1):
        q = -1
        for cut in range(1, min(L, prices.shape[0]) + 1):
            cand = prices[cut - 1] + best[L - cut]
            if cand > q:
                q = cand
        best[L] = q
    return best[length]


def edit_distance(a, b):
    n, m = a.shape[0], b.shape[0]
    prev = list(range(m + 1))
    for i in range(1, n + 1):
        cur = [i] + [0] * m
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        prev = cur
    return prev[m]


def dot_with_check(u, v):
    if u.shape != v.shape:
        raise ValueError("length mismatch")
    total = 0
    for i in range(u.shape[0]):
        total += u[i] * v[i]
    return total


def row_norms_max(m):
    best_row = -1
    best = -1.0
    for i in range(m.shape[0]):
        s = 0.0
        for j in range(m.shape[1]):
            s += m[i, j] ** 2
        norm = s ** 0.5
        if norm > best:
            best = norm
            best_row = i
    return best_row, best


def lower_triangular_solve(l, b):
    n = b.shape[0]
    x = jnp.zeros_like(b)
    for i in range(n):
        s = b[i]
        for j in range(i):
            s = s - l[i, j] * x[j]
        if l[i, i] == 0:
            raise ZeroDivisionError("singular matrix")
        x = x.at[i].set(s / l[i, i])
    return x


def count_inversions(xs):
    inv = 0
    n = xs.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            if xs[i] > xs[j]:
                inv += 1
    return inv


def matrix_power_fib(n):
    a, b, c, d = 1, 1, 1, 0
    ra, rb, rc, rd = 1, 0, 0, 1
    while n > 0:
        if n % 2 == 1:
            ra, rb, rc, rd = ra * a + rb * c, ra * b + rb * d, rc * a + rd * c, rc * b + rd * d
        a, b, c, d = a * a + b * c, a * b + b * d, c * a + d * c, c * b + d * d
        n //= 2
    return rb


def min_path_sum(grid):
    rows, cols = grid.shape
    cost = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        for j in range(cols):
            if i == 0 and j == 0:
                cost[i][j] = grid[0, 0]
            elif i == 0:
                cost[i][j] = cost[i][j - 1] + grid[i, j]
            elif j == 0:
                cost[i][j] = cost[i - 1][j] + grid[i, j]
            else:
                cost[i][j] = min(cost[i - 1][j], cost[i][j - 1]) + grid[i, j]
    return cost[-1][-1]


def house_robber(xs):
    take, skip = 0, 0
    for v in xs:
        take, skip = skip + v, max(take, skip)
    return max(take, skip)


def pascal_row(n):
    row = [1]
    for k in range(n):
        row.append(row[k] * (n - k) // (k + 1))
    return row


def vector_angle(u, v):
    dot = 0.0
    nu = 0.0
    nv = 0.0
    for a, b in zip(u, v):
        dot += a * b
        nu += a * a
        nv += b * b
    if nu == 0 or nv == 0:
        raise ValueError("zero vector")
    c = dot / math.sqrt(nu * nv)
    c = max(-1.0, min(1.0, c))
    return math.acos(c)


def subset_sum_exists(xs, target):
    reachable = 1
    for v in xs:
        reachable = reachable | (reachable << v)
    return (reachable >> target) & 1 == 1


def diag_dominant(m):
    for i in range(m.shape[0]):
        off = 0
        for j in range(m.shape[1]):
            if j != i:
                off += abs(m[i, j])
        if abs(m[i, i]) <= off:
            return False, i
    return True, -1


CASES = [
    (lis_length, [(jnp.array([3, 1, 4, 1, 5, 9, 2, 6]),), (jnp.array([5, 4, 3]),), (jnp.zeros(0),)]),
    (knapsack, [(jnp.array([1, 3, 4]), jnp.array([15, 20, 30]), 4), (jnp.array([5]), jnp.array([10]), 3)]),
    (coin_change_ways, [(jnp.int32(10),), (jnp.int32(0),), (jnp.int32(7),), (4,)]),
    (max_subarray, [(jnp.array([-2, 1, -3, 4, -1, 2, 1, -5, 4]),), (jnp.array([-3.0, -1.0]),), (jnp.array([2]),)]),
    (matmul_loops, [(jnp.array([[1, 2], [3, 4]]), jnp.array([[5], [6]])), (jnp.ones((2, 3)), jnp.ones((2, 2))),
                    (jnp.array([[1.5]]), jnp.array([[2.0, -1.0]]))]),
    (det_gauss, [(jnp.array([[2.0, 1.0], [1.0, 3.0]]),), (jnp.array([[0, 1], [1, 0]]),),
                 (jnp.array([[1.0, 2.0], [2.0, 4.0]]),), (jnp.zeros((2, 2)),)]),
    (trace_and_symmetric, [(jnp.array([[1, 2], [2, 5]]),), (jnp.array([[1.0, 2.0], [0.0, 1.0]]),)]),
    (power_iteration, [(jnp.array([[2.0, 0.0], [0.0, 1.0]]), 20), (jnp.zeros((2, 2)), 3),
                       (jnp.array([[1.0, 1.0], [1.0, 1.0]]), 0)]),
    (jacobi_solve, [(jnp.array([[4.0, 1.0], [2.0, 5.0]]), jnp.array([1.0, 2.0]), 1e-5),
                    (jnp.array([[1.0, 0.0], [0.0, 1.0]]), jnp.array([3.0, 4.0]), jnp.float32(1e-3))]),
    (prefix_sum_queries, [(jnp.array([1, 2, 3, 4]), [(0, 2), (1, 4), (3, 3)]), (jnp.array([0.5, 1.5]), [(0, 2)])]),
    (longest_positive_run, [(jnp.array([1, 2, -1, 3, 4, 5, 0]),), (jnp.zeros(0),), (jnp.array([-1.0]),)]),
    (stairs_ways, [(jnp.int32(10),), (jnp.int32(0),), (jnp.int32(46),), (jnp.int32(50),)]),
    (partitions_count, [(5,), (jnp.int32(5),)]),
    (rod_cutting, [(jnp.array([1, 5, 8, 9]), 4), (jnp.array([3]), 5), (jnp.array([2.0, 5.0]), 3)]),
    (edit_distance, [(jnp.array([1, 2, 3]), jnp.array([1, 3])), (jnp.zeros(0, jnp.int32), jnp.array([4, 5])),
                     (jnp.array([7, 7]), jnp.array([7, 7]))]),
    (dot_with_check, [(jnp.array([1, 2, 3]), jnp.array([4, 5, 6])), (jnp.array([1.0]), jnp.array([1.0, 2.0])),
                      (jnp.array([50000, 50000]), jnp.array([50000, 50000]))]),
    (row_norms_max, [(jnp.array([[3.0, 4.0], [1.0, 1.0]]),), (jnp.zeros((2, 2)),), (jnp.array([[1, 2], [2, 2]]),)]),
    (lower_triangular_solve, [(jnp.array([[2.0, 0.0], [1.0, 1.0]]), jnp.array([2.0, 3.0])),
                              (jnp.array([[1.0, 0.0], [1.0, 0.0]]), jnp.array([1.0, 1.0]))]),
    (count_inversions, [(jnp.array([3, 1, 2]),), (jnp.array([1.0, 2.0, 3.0]),), (jnp.zeros(0),)]),
    (matrix_power_fib, [(jnp.int32(10),), (jnp.int32(0),), (jnp.int32(40),), (jnp.int32(60),)]),
    (min_path_sum, [(jnp.array([[1, 3, 1], [1, 5, 1], [4, 2, 1]]),), (jnp.array([[2.5]]),)]),
    (house_robber, [(jnp.array([2, 7, 9, 3, 1]),), (jnp.zeros(0),), (jnp.array([5.0]),)]),
    (pascal_row, [(jnp.int32(4),), (jnp.int32(0),), (6,)]),
    (vector_angle, [(jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0])), (jnp.array([1.0, 1.0]), jnp.array([2.0, 2.0])),
                    (jnp.zeros(2), jnp.array([1.0, 0.0]))]),
    (subset_sum_exists, [(jnp.array([3, 5, 7]), 12), (jnp.array([3, 5, 7]), 11), (jnp.array([20, 20]), 40),
                         ([2, 4], jnp.int32(6))]),
    (diag_dominant, [(jnp.array([[4, 1], [1, 3]]),), (jnp.array([[1.0, 2.0], [0.0, 1.0]]),)]),
]
