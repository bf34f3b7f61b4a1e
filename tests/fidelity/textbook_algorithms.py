"""Small functions in the style of textbook algorithms (sorting, searching, DP tables, number
theory, greedy, counting, stacks and queues, matrices, in-place list algorithms), each with
inputs that take every path; test_textbook_functions.py runs them against eager Python.

``CASES`` is a list of ``(function, inputs, mutates)``: ``inputs`` a list of argument tuples
(JAX arrays and scalars, Python lists and ints); ``mutates``: the function changes an array
argument in place, so its eager run (the oracle) gets NumPy copies, as NumPy code would.
"""

from __future__ import annotations

import jax.numpy as jnp

i32, f32 = jnp.int32, jnp.float32


def arr(*values):
    return jnp.array(values, jnp.float32 if any(isinstance(v, float) for v in values) else jnp.int32)


# -- sorting ----------------------------------------------------------------------------

def bubble_sort(a):
    n = a.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
    return a


def bubble_sort_early_exit(a):
    n = a.shape[0]
    swapped = True
    passes = 0
    while swapped:
        swapped = False
        passes += 1
        for j in range(n - 1):
            if a[j] > a[j + 1]:
                t = a[j]
                a[j] = a[j + 1]
                a[j + 1] = t
                swapped = True
    return a, passes


def insertion_sort(a):
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


def selection_sort(a):
    n = a.shape[0]
    for i in range(n):
        m = i
        for j in range(i + 1, n):
            if a[j] < a[m]:
                m = j
        a[i], a[m] = a[m], a[i]
    return a


def gnome_sort(a):
    i = 0
    n = a.shape[0]
    steps = 0
    while i < n:
        steps += 1
        if i == 0 or a[i - 1] <= a[i]:
            i += 1
        else:
            a[i], a[i - 1] = a[i - 1], a[i]
            i -= 1
    return a, steps


def cocktail_sort(a):
    lo, hi = 0, a.shape[0] - 1
    while lo < hi:
        for j in range(lo, hi):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
        hi -= 1
        for j in range(hi, lo, -1):
            if a[j - 1] > a[j]:
                a[j - 1], a[j] = a[j], a[j - 1]
        lo += 1
    return a


def odd_even_sort(a):
    n = a.shape[0]
    for p in range(n):
        for j in range(p % 2, n - 1, 2):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
    return a


def counting_sort_small(a, top):
    counts = jnp.zeros(8, jnp.int32)
    for v in a:
        counts = counts.at[v].add(1)
    out = []
    for v in range(8):
        for _ in range(int(top)):
            pass
        out.append(counts[v])
    return jnp.stack(out)


def sort_python_list(xs):
    for i in range(len(xs)):
        for j in range(len(xs) - 1 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]
    return xs


def is_sorted(a):
    ok = True
    for i in range(a.shape[0] - 1):
        if a[i] > a[i + 1]:
            ok = False
    return ok


def is_sorted_early(a):
    for i in range(a.shape[0] - 1):
        if a[i] > a[i + 1]:
            return False
    return True


def _swap_if_greater(xs, i, j):
    if xs[i] > xs[j]:
        xs[i], xs[j] = xs[j], xs[i]


def sort_three_by_helper(xs):
    _swap_if_greater(xs, 0, 1)
    _swap_if_greater(xs, 1, 2)
    _swap_if_greater(xs, 0, 1)
    return xs[0] * 100 + xs[1] * 10 + xs[2]


# -- searching --------------------------------------------------------------------------

def linear_search(a, x):
    for i in range(a.shape[0]):
        if a[i] == x:
            return i
    return -1


def linear_search_last(a, x):
    found = -1
    for i, v in enumerate(a):
        if v == x:
            found = i
    return found


def binary_search(a, x):
    lo, hi = 0, a.shape[0] - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if a[mid] == x:
            return mid
        elif a[mid] < x:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


def lower_bound(a, x):
    lo, hi = 0, a.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def upper_bound(a, x):
    lo, hi = 0, a.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def peak_index(a):
    lo, hi = 0, a.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < a[mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def integer_sqrt(n):
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid * mid <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo


def count_occurrences_sorted(a, x):
    return upper_bound(a, x) - lower_bound(a, x)


def min_index(a):
    best = 0
    for i in range(1, a.shape[0]):
        if a[i] < a[best]:
            best = i
    return best


def second_largest(a):
    first = a[0]
    second = -1000
    for v in a[1:]:
        if v > first:
            second = first
            first = v
        elif v > second and v != first:
            second = v
    return second


def rotated_minimum(a):
    lo, hi = 0, a.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] > a[hi]:
            lo = mid + 1
        else:
            hi = mid
    return a[lo]


def search_python_list(xs, x):
    i = 0
    while i < len(xs):
        if xs[i] == x:
            break
        i += 1
    else:
        i = -1
    return i


# -- dynamic programming ----------------------------------------------------------------

def fib_loop(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def climb_stairs(n):
    one, two = 1, 1
    i = 2
    while i <= n:
        one, two = one + two, one
        i += 1
    return one


def coin_change_ways(coins, amount):
    ways = jnp.zeros(16, jnp.int32).at[0].set(1)
    for c in coins:
        for s in range(1, 16):
            if s >= c and s <= amount:
                ways = ways.at[s].add(ways[s - c])
    return ways[amount]


def min_coins(coins, amount):
    big = 1000
    best = [0] + [big] * 12
    for s in range(1, 13):
        for c in coins:
            if c <= s and best[s - c] + 1 < best[s]:
                best[s] = best[s - c] + 1
    return best[amount] if best[amount] < big else -1


def lis_length(a):
    n = a.shape[0]
    dp = jnp.ones(n, jnp.int32)
    for i in range(n):
        for j in range(i):
            if a[j] < a[i] and dp[j] + 1 > dp[i]:
                dp = dp.at[i].set(dp[j] + 1)
    return jnp.max(dp)


def lcs_length(a, b):
    n, m = a.shape[0], b.shape[0]
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table[n][m]


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


def knapsack(weights, values, cap):
    best = jnp.zeros(11, jnp.int32)
    for k in range(weights.shape[0]):
        w, v = weights[k], values[k]
        for c in range(10, 0, -1):
            if c >= w and c <= cap:
                cand = best[c - w] + v
                if cand > best[c]:
                    best = best.at[c].set(cand)
    return best[cap]


def kadane(a):
    best = a[0]
    cur = a[0]
    for v in a[1:]:
        cur = v if cur < 0 else cur + v
        if cur > best:
            best = cur
    return best


def house_robber(a):
    take, skip = 0, 0
    for v in a:
        take, skip = skip + v, max(take, skip)
    return max(take, skip)


def unique_paths_blocked(grid):
    n, m = grid.shape
    ways = [[0] * m for _ in range(n)]
    for i in range(n):
        for j in range(m):
            if grid[i, j] == 1:
                ways[i][j] = 0
            elif i == 0 and j == 0:
                ways[i][j] = 1
            else:
                up = ways[i - 1][j] if i > 0 else 0
                left = ways[i][j - 1] if j > 0 else 0
                ways[i][j] = up + left
    return ways[n - 1][m - 1]


def pascal_row(n):
    row = [1]
    for _ in range(n):
        nxt = [1]
        for k in range(len(row) - 1):
            nxt.append(row[k] + row[k + 1])
        nxt.append(1)
        row = nxt
    return row


def binomial_table(n, k):
    c = jnp.zeros((8, 8), jnp.int32)
    for i in range(8):
        for j in range(i + 1):
            if j == 0 or j == i:
                c = c.at[i, j].set(1)
            else:
                c = c.at[i, j].set(c[i - 1, j - 1] + c[i - 1, j])
    return c[n, k]


def catalan(n):
    c = [1] + [0] * 7
    for i in range(1, 8):
        for j in range(i):
            c[i] += c[j] * c[i - 1 - j]
    return c[n]


def max_product_subarray(a):
    hi = lo = best = a[0]
    for v in a[1:]:
        if v < 0:
            hi, lo = lo, hi
        hi = max(v, hi * v)
        lo = min(v, lo * v)
        best = max(best, hi)
    return best


def partition_equal(a):
    total = jnp.sum(a)
    if total % 2 == 1:
        return False
    half = total // 2
    can = jnp.zeros(32, bool).at[0].set(True)
    for v in a:
        for s in range(31, 0, -1):
            if s >= v:
                can = can.at[s].set(can[s] | can[s - v])
    return can[half]


def longest_run(a):
    best = cur = 1
    for i in range(1, a.shape[0]):
        if a[i] == a[i - 1]:
            cur += 1
            best = max(best, cur)
        else:
            cur = 1
    return best


def stairs_min_cost(cost):
    a, b = 0, 0
    for i in range(2, cost.shape[0] + 1):
        a, b = b, min(b + cost[i - 1], a + cost[i - 2])
    return b


# -- number theory ----------------------------------------------------------------------

def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def lcm(a, b):
    return a // gcd(a, b) * b


def extended_gcd(a, b):
    x0, x1, y0, y1 = 1, 0, 0, 1
    while b != 0:
        q = a // b
        a, b = b, a - q * b
        x0, x1 = x1, x0 - q * x1
        y0, y1 = y1, y0 - q * y1
    return a, x0, y0


def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def count_primes_sieve(n):
    flags = jnp.ones(40, bool).at[0].set(False).at[1].set(False)
    for p in range(2, 7):
        if flags[p]:
            for m in range(p * p, 40, p):
                flags = flags.at[m].set(False)
    count = 0
    for i in range(40):
        if flags[i] and i < n:
            count += 1
    return count


def modpow(base, exp, mod):
    result = 1
    base = base % mod
    while exp > 0:
        if exp % 2 == 1:
            result = result * base % mod
        base = base * base % mod
        exp //= 2
    return result


def digit_sum(n):
    s = 0
    while n > 0:
        s += n % 10
        n //= 10
    return s


def reverse_digits(n):
    r = 0
    while n > 0:
        r = r * 10 + n % 10
        n = n // 10
    return r


def is_palindrome_number(n):
    return n == reverse_digits(n)


def count_divisors(n):
    c = 0
    for d in range(1, 31):
        if d <= n and n % d == 0:
            c += 1
    return c


def is_perfect(n):
    s = 0
    d = 1
    while d < n:
        if n % d == 0:
            s += d
        d += 1
    return s == n


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def popcount(n):
    c = 0
    while n:
        c += n & 1
        n >>= 1
    return c


def factorial_mod(n, m):
    r = 1
    for i in range(2, n + 1):
        r = r * i % m
    return r


def fib_mod(n, m):
    a, b = 0, 1
    i = 0
    while i < n:
        a, b = b, (a + b) % m
        i += 1
    return a


def smallest_prime_factor(n):
    d = 2
    while d * d <= n:
        if n % d == 0:
            return d
        d += 1
    return n


def sum_of_prime_factors(n):
    s = 0
    d = 2
    while n > 1:
        if n % d == 0:
            s += d
            n //= d
        else:
            d += 1
    return s


def digital_root(n):
    while n >= 10:
        n = digit_sum(n)
    return n


def totient(n):
    result = n
    p = 2
    m = n
    while p * p <= m:
        if m % p == 0:
            while m % p == 0:
                m //= p
            result -= result // p
        p += 1
    if m > 1:
        result -= result // m
    return result


def python_int_power_sum(k):
    total = 0
    for i in range(1, 6):
        total += i ** 2 if i <= k else 0
    return total


# -- greedy -----------------------------------------------------------------------------

def activity_count(starts, ends):
    count = 0
    last = -1
    for i in range(starts.shape[0]):
        if starts[i] >= last:
            count += 1
            last = ends[i]
    return count


def can_jump(a):
    reach = 0
    for i in range(a.shape[0]):
        if i > reach:
            return False
        reach = max(reach, i + a[i])
    return True


def min_jumps(a):
    jumps = 0
    end = 0
    far = 0
    for i in range(a.shape[0] - 1):
        far = max(far, i + a[i])
        if i == end:
            jumps += 1
            end = far
    return jumps


def gas_station(gas, cost):
    total, tank, start = 0, 0, 0
    for i in range(gas.shape[0]):
        d = gas[i] - cost[i]
        total += d
        tank += d
        if tank < 0:
            start = i + 1
            tank = 0
    return start if total >= 0 else -1


def greedy_coins(amount):
    count = 0
    for c in (25, 10, 5, 1):
        while amount >= c:
            amount -= c
            count += 1
    return count


def best_stock_profit(prices):
    low = prices[0]
    best = 0
    for p in prices:
        if p < low:
            low = p
        elif p - low > best:
            best = p - low
    return best


def all_stock_profit(prices):
    total = 0
    for i in range(1, prices.shape[0]):
        if prices[i] > prices[i - 1]:
            total += prices[i] - prices[i - 1]
    return total


def fractional_fill(weights, cap):
    used = 0.0
    taken = 0
    for w in weights:
        if used + w <= cap:
            used += w
            taken += 1
        else:
            break
    return used, taken


def assign_cookies(greed, sizes):
    i = j = 0
    while i < greed.shape[0] and j < sizes.shape[0]:
        if sizes[j] >= greed[i]:
            i += 1
        j += 1
    return i


# -- counting ---------------------------------------------------------------------------

def histogram_list(a):
    bins = [0, 0, 0, 0]
    for v in a:
        bins[v % 4] += 1
    return bins


def histogram_dict(a):
    counts = {"neg": 0, "zero": 0, "pos": 0}
    for v in a:
        if v < 0:
            counts["neg"] += 1
        elif v == 0:
            counts["zero"] += 1
        else:
            counts["pos"] += 1
    return counts


def count_inversions(a):
    n = a.shape[0]
    c = 0
    for i in range(n):
        for j in range(i + 1, n):
            if a[i] > a[j]:
                c += 1
    return c


def majority_vote(a):
    cand, count = a[0], 0
    for v in a:
        if count == 0:
            cand = v
        count += 1 if v == cand else -1
    return cand


def count_runs(a):
    runs = 1
    for i in range(1, a.shape[0]):
        if a[i] != a[i - 1]:
            runs += 1
    return runs


def count_pairs_with_sum(a, k):
    c = 0
    n = a.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            if a[i] + a[j] == k:
                c += 1
    return c


def two_sum(a, k):
    n = a.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            if a[i] + a[j] == k:
                return i, j
    return -1, -1


def mode_small(a):
    counts = [0] * 6
    for v in a:
        counts[v] += 1
    best = 0
    for v in range(6):
        if counts[v] > counts[best]:
            best = v
    return best


def count_local_maxima(a):
    c = 0
    for i in range(1, a.shape[0] - 1):
        if a[i] > a[i - 1] and a[i] > a[i + 1]:
            c += 1
    return c


def count_sign_changes(a):
    changes = 0
    prev = a[0] >= 0
    for v in a[1:]:
        now = v >= 0
        if now != prev:
            changes += 1
        prev = now
    return changes


def distinct_sorted(a):
    d = 1
    for i in range(1, a.shape[0]):
        if a[i] != a[i - 1]:
            d += 1
    return d


def counts_in_nested_list(a):
    table = [[0, 0], [0, 0]]
    for v in a:
        table[v % 2][int(v > 2)] += 1
    return table


# -- stacks and queues ------------------------------------------------------------------

def balanced(codes):
    depth = 0
    ok = True
    for c in codes:
        if c == 1:
            depth += 1
        else:
            depth -= 1
            if depth < 0:
                ok = False
    return ok and depth == 0


def balanced_stack(codes):
    stack = []
    for c in codes:
        if c > 0:
            stack.append(c)
        elif not stack or stack.pop() != -c:
            return False
    return not stack


def next_greater(a):
    n = a.shape[0]
    out = jnp.full(n, -1, a.dtype)
    for i in range(n):
        for j in range(i + 1, n):
            if a[j] > a[i]:
                out = out.at[i].set(a[j])
                break
    return out


def stock_span(prices):
    n = prices.shape[0]
    span = jnp.ones(n, jnp.int32)
    for i in range(n):
        j = i - 1
        while j >= 0 and prices[j] <= prices[i]:
            j -= 1
        span = span.at[i].set(i - j)
    return span


def rpn_eval(tokens):
    stack = []
    for t in tokens:
        if t >= 0:
            stack.append(t)
        else:
            b = stack.pop()
            a = stack.pop()
            stack.append(a + b if t == -1 else a * b)
    return stack[-1]


def queue_two_stacks(pushes):
    inbox, outbox = [], []
    total = 0
    for v in pushes:
        inbox.append(v)
    while inbox:
        outbox.append(inbox.pop())
    k = 1
    while outbox:
        total += outbox.pop() * k
        k += 1
    return total


def min_stack_track(a):
    mins = [a[0]]
    for v in a[1:]:
        mins.append(jnp.minimum(mins[-1], v))
    return mins[-1], len(mins)


def sliding_window_max(a, w):
    best = []
    for i in range(a.shape[0] - w + 1):
        m = a[i]
        for j in range(i, i + w):
            if a[j] > m:
                m = a[j]
        best.append(m)
    return jnp.stack(best)


def stack_pop_if(a, x):
    stack = [1.0, 2.0, 3.0]
    v = stack.pop() if x > 0 else 0.0
    return v, len(stack)


def log_in_and(a, x):
    log = []
    ok = x > 0 and log.append(1) is None
    return ok, len(log)


# -- matrices ---------------------------------------------------------------------------

def transpose_in_place(m):
    n = len(m)
    for i in range(n):
        for j in range(i + 1, n):
            m[i][j], m[j][i] = m[j][i], m[i][j]
    return m


def rotate_ccw(m):
    n = len(m)
    for i in range(n):
        for j in range(i + 1, n):
            m[i][j], m[j][i] = m[j][i], m[i][j]
    m.reverse()


def spiral_sum(m):
    top, bottom, left, right = 0, m.shape[0] - 1, 0, m.shape[1] - 1
    total = 0
    k = 1
    while top <= bottom and left <= right:
        for j in range(left, right + 1):
            total += m[top, j] * k
            k += 1
        top += 1
        for i in range(top, bottom + 1):
            total += m[i, right] * k
            k += 1
        right -= 1
        if top <= bottom:
            for j in range(right, left - 1, -1):
                total += m[bottom, j] * k
                k += 1
            bottom -= 1
        if left <= right:
            for i in range(bottom, top - 1, -1):
                total += m[i, left] * k
                k += 1
            left += 1
    return total


def matmul_loops(a, b):
    n, k = a.shape
    m = b.shape[1]
    out = jnp.zeros((n, m), a.dtype)
    for i in range(n):
        for j in range(m):
            s = 0
            for t in range(k):
                s += a[i, t] * b[t, j]
            out = out.at[i, j].set(s)
    return out


def is_identity(m):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            want = 1 if i == j else 0
            if m[i, j] != want:
                return False
    return True


def set_zeros(m):
    rows, cols = m.shape
    zr = [False] * rows
    zc = [False] * cols
    for i in range(rows):
        for j in range(cols):
            if m[i, j] == 0:
                zr[i] = True
                zc[j] = True
    for i in range(rows):
        for j in range(cols):
            if zr[i] or zc[j]:
                m[i, j] = 0
    return m


def row_max_positions(m):
    out = []
    for row in m:
        best = 0
        for j in range(row.shape[0]):
            if row[j] > row[best]:
                best = j
        out.append(best)
    return out


def clip_rows_in_place(grid, hi):
    for row in grid:
        for j in range(len(row)):
            if row[j] > hi:
                row[j] = hi
    return grid


def symmetric(m):
    ok = True
    for i in range(m.shape[0]):
        for j in range(i):
            if m[i, j] != m[j, i]:
                ok = False
    return ok


def diagonal_difference(m):
    a = b = 0
    n = m.shape[0]
    for i in range(n):
        a += m[i, i]
        b += m[i, n - 1 - i]
    return abs(a - b)


def saddle_count(m):
    c = 0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] == jnp.min(m[i]) and m[i, j] == jnp.max(m[:, j]):
                c += 1
    return c


# -- in-place list and array algorithms -------------------------------------------------

def reverse_in_place(a):
    i, j = 0, a.shape[0] - 1
    while i < j:
        a[i], a[j] = a[j], a[i]
        i += 1
        j -= 1
    return a


def reverse_list_in_place(xs):
    i, j = 0, len(xs) - 1
    while i < j:
        xs[i], xs[j] = xs[j], xs[i]
        i += 1
        j -= 1


def rotate_by_reversal(a, k):
    n = a.shape[0]
    k = k % n

    def rev(lo, hi):
        nonlocal a
        while lo < hi:
            a[lo], a[hi] = a[hi], a[lo]
            lo += 1
            hi -= 1

    rev(0, n - 1)
    rev(0, k - 1)
    rev(k, n - 1)
    return a


def remove_duplicates_sorted(a):
    if a.shape[0] == 0:
        return 0
    w = 1
    for r in range(1, a.shape[0]):
        if a[r] != a[w - 1]:
            a[w] = a[r]
            w += 1
    return w, a


def move_zeros(a):
    w = 0
    for r in range(a.shape[0]):
        if a[r] != 0:
            a[w], a[r] = a[r], a[w]
            w += 1
    return a


def dutch_flag(a):
    lo, mid, hi = 0, 0, a.shape[0] - 1
    while mid <= hi:
        if a[mid] == 0:
            a[lo], a[mid] = a[mid], a[lo]
            lo += 1
            mid += 1
        elif a[mid] == 1:
            mid += 1
        else:
            a[mid], a[hi] = a[hi], a[mid]
            hi -= 1
    return a


def prefix_sums_in_place(a):
    for i in range(1, a.shape[0]):
        a[i] += a[i - 1]
    return a


def running_max_enumerate(a):
    for i, v in enumerate(a):
        if i > 0 and a[i - 1] > v:
            a[i] = a[i - 1]
    return a


def swap_pairs(a):
    for i in range(0, a.shape[0] - 1, 2):
        a[i], a[i + 1] = a[i + 1], a[i]
    return a


def partition_around(a, pivot):
    i = 0
    for j in range(a.shape[0]):
        if a[j] < pivot:
            a[i], a[j] = a[j], a[i]
            i += 1
    return i, a


def halve_int_items(a):
    for i in range(a.shape[0]):
        if a[i] % 2 == 0:
            a[i] /= 2
    return a


def double_list_items(xs, x):
    for i in range(len(xs)):
        if xs[i] < x:
            xs[i] = xs[i] * 2
    return len(xs)


def append_squares(xs, n):
    for i in range(4):
        xs.append(i * i)
    return xs


def dict_state_update(state, x):
    for i in range(3):
        if x > i:
            state["h"] = state["h"].at[i].set(x)
    state["steps"] = state["steps"] + 1
    return state["h"].sum()


def alias_list_update(x):
    a = [0.0, 1.0]
    b = a
    for i in range(3):
        if x > i:
            b[0] = b[0] + x
    return a[0], b[0]


def nested_counter(n):
    p = [[0]]
    for _ in range(n):
        p[0][0] += 1
    return p[0][0]


def flag_while_is_false(a):
    done = False
    i = 0
    while done is False:
        if i >= a.shape[0] - 1 or a[i] > a[i + 1]:
            done = True
        i += 1
    return i


def bool_ops_on_flag(x):
    flag = False
    if x > 0:
        flag = True
    return ~flag, -flag, flag is True, flag is not False


def list_ops_after_append(a):
    out = []
    for v in a:
        out.append(v * 2)
    return len(out * 2), len(out + out), jnp.sum(jnp.stack(out[::-1]))


def int_list_division(a):
    a[0] /= 2
    a[1] //= 2
    return a


def counter_in_default(x, memo=None):
    memo = {} if memo is None else memo
    total = 0
    for i in range(3):
        if x > i:
            total += i
    memo["t"] = total
    return memo["t"]


def bisect_insert_list(xs, x):
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def merge_sorted(a, b):
    i = j = 0
    out = []
    n, m = a.shape[0], b.shape[0]
    while i < n or j < m:
        if j >= m or (i < n and a[i] <= b[j]):
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out


def merge_fixed(a, b):
    n, m = a.shape[0], b.shape[0]
    out = jnp.zeros(n + m, a.dtype)
    i = j = 0
    for k in range(n + m):
        if j >= m or (i < n and a[jnp.minimum(i, n - 1)] <= b[jnp.minimum(j, m - 1)]):
            out = out.at[k].set(a[jnp.minimum(i, n - 1)])
            i += 1
        else:
            out = out.at[k].set(b[jnp.minimum(j, m - 1)])
            j += 1
    return out


def tuple_swap_chain(x, y, z):
    for _ in range(3):
        if x > y:
            x, y = y, x
        if y > z:
            y, z = z, y
    return x, y, z


def float_accumulate_loop(x):
    t = 0.0
    n = 0
    while t < 1.0 and x > 0:
        t += 0.25
        n += 1
    return n, t


def early_return_in_nested(a, x):
    for i in range(a.shape[0]):
        for j in range(a.shape[0]):
            if a[i] * a[j] == x:
                return i * 10 + j
    return -1


def continue_skip_sum(a):
    s = 0
    for v in a:
        if v < 0:
            continue
        if v > 5:
            break
        s += v
    return s


def while_else_found(a, x):
    i = 0
    while i < a.shape[0]:
        if a[i] == x:
            break
        i += 1
    else:
        return -1
    return i


def helper_returning_list(a):
    def pair(v):
        return [v, v * 2]

    total = 0
    for v in a:
        p = pair(v)
        total += p[0] + p[1]
    return total


def closure_appends(a):
    seen = []

    def note(v):
        seen.append(v)

    for i in range(3):
        note(a[i])
    return len(seen), seen[1]


def method_mutates_self(a):
    class Acc:
        def __init__(self):
            self.buf = jnp.zeros(3)

        def add(self, i, v):
            self.buf = self.buf.at[i].add(v)

    acc = Acc()
    for i in range(3):
        if a[i] > 0:
            acc.add(i, a[i])
    return acc.buf


CASES = [
    (bubble_sort, [(arr(4, 1, 3, 2),), (arr(1, 2, 3, 4),), (arr(2.5, -1.0, 0.0),)], True),
    (bubble_sort_early_exit, [(arr(4, 1, 3, 2),), (arr(1, 2, 3),)], True),
    (insertion_sort, [(arr(4, 1, 3, 2),), (arr(1, 2, 3),), (arr(3, 2, 1),)], True),
    (selection_sort, [(arr(4, 1, 3, 2),), (arr(5, 5, 1),)], True),
    (gnome_sort, [(arr(3, 1, 2),), (arr(1, 2, 3),)], True),
    (cocktail_sort, [(arr(5, 1, 4, 2, 3),), (arr(1, 2),)], True),
    (odd_even_sort, [(arr(4, 3, 2, 1),), (arr(1, 3, 2, 4),)], True),
    (counting_sort_small, [(arr(3, 1, 3, 7, 0), 2)], False),
    (sort_python_list, [([5, 3, 4, 1],), ([1.0, 2.0],), ([2, 2, 1],)], False),
    (is_sorted, [(arr(1, 2, 3),), (arr(3, 1, 2),)], False),
    (is_sorted_early, [(arr(1, 2, 3),), (arr(1, 3, 2),)], False),
    (sort_three_by_helper, [([3, 1, 2],), ([1, 2, 3],), ([2, 3, 1],)], False),
    (linear_search, [(arr(5, 3, 7), i32(7)), (arr(5, 3, 7), i32(4))], False),
    (linear_search_last, [(arr(5, 3, 5), i32(5)), (arr(5, 3, 7), i32(4))], False),
    (binary_search, [(arr(1, 3, 5, 7, 9), i32(7)), (arr(1, 3, 5, 7, 9), i32(4)), (arr(1, 3, 5), i32(1))], False),
    (lower_bound, [(arr(1, 3, 3, 7), i32(3)), (arr(1, 3, 3, 7), i32(8))], False),
    (upper_bound, [(arr(1, 3, 3, 7), i32(3)), (arr(1, 3, 3, 7), i32(0))], False),
    (peak_index, [(arr(1, 3, 5, 4, 2),), (arr(5, 4, 3),), (arr(1, 2, 3),)], False),
    (integer_sqrt, [(i32(26),), (i32(0),), (i32(49),)], False),
    (count_occurrences_sorted, [(arr(1, 3, 3, 3, 7), i32(3)), (arr(1, 3, 7), i32(2))], False),
    (min_index, [(arr(4, 1, 3, 1),), (arr(0, 1, 2),)], False),
    (second_largest, [(arr(4, 9, 3, 7),), (arr(9, 9, 1),)], False),
    (rotated_minimum, [(arr(4, 5, 1, 2, 3),), (arr(1, 2, 3),)], False),
    (search_python_list, [([4, 2, 9], i32(9)), ([4, 2, 9], i32(5))], False),
    (fib_loop, [(i32(10),), (i32(0),), (10,)], False),
    (climb_stairs, [(i32(5),), (i32(1),)], False),
    (coin_change_ways, [(arr(1, 2, 5), i32(5)), (arr(2, 3), i32(7))], False),
    (min_coins, [(arr(1, 3, 4), i32(6)), (arr(5, 7), i32(3))], False),
    (lis_length, [(arr(3, 1, 4, 1, 5, 9, 2, 6),), (arr(5, 4, 3),)], False),
    (lcs_length, [(arr(1, 2, 3, 4), arr(2, 4, 3)), (arr(1, 1), arr(2, 2))], False),
    (edit_distance, [(arr(1, 2, 3), arr(1, 3)), (arr(1, 2), arr(1, 2))], False),
    (knapsack, [(arr(1, 3, 4), arr(15, 20, 30), i32(4)), (arr(5, 6), arr(1, 2), i32(4))], False),
    (kadane, [(arr(-2, 1, -3, 4, -1, 2, 1, -5, 4),), (arr(-3, -1, -2),)], False),
    (house_robber, [(arr(2, 7, 9, 3, 1),), (arr(5,),)], False),
    (unique_paths_blocked, [(jnp.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]),), (jnp.array([[0, 1], [1, 0]]),)], False),
    (pascal_row, [(4,), (0,)], False),
    (binomial_table, [(i32(5), i32(2)), (i32(7), i32(0))], False),
    (catalan, [(i32(4),), (i32(0),)], False),
    (max_product_subarray, [(arr(2, 3, -2, 4),), (arr(-2, 0, -1),), (arr(-2, 3, -4),)], False),
    (partition_equal, [(arr(1, 5, 11, 5),), (arr(1, 2, 3, 5),), (arr(1, 2, 4),)], False),
    (longest_run, [(arr(1, 1, 2, 2, 2, 3),), (arr(1, 2, 3),)], False),
    (stairs_min_cost, [(arr(10, 15, 20),), (arr(1, 100, 1, 1, 1, 100, 1, 1, 100, 1),)], False),
    (gcd, [(i32(48), i32(18)), (i32(7), i32(0)), (i32(17), i32(5))], False),
    (lcm, [(i32(4), i32(6)), (i32(7), i32(3))], False),
    (extended_gcd, [(i32(240), i32(46)), (i32(3), i32(7))], False),
    (is_prime, [(i32(29),), (i32(1),), (i32(15),), (i32(2),)], False),
    (count_primes_sieve, [(i32(20),), (i32(2),)], False),
    (modpow, [(i32(3), i32(13), i32(7)), (i32(2), i32(0), i32(5))], False),
    (digit_sum, [(i32(9875),), (i32(0),)], False),
    (reverse_digits, [(i32(1230),), (i32(7),)], False),
    (is_palindrome_number, [(i32(1221),), (i32(123),)], False),
    (count_divisors, [(i32(12),), (i32(13),)], False),
    (is_perfect, [(i32(28),), (i32(12),)], False),
    (collatz_steps, [(i32(6),), (i32(1),), (i32(27),)], False),
    (popcount, [(i32(13),), (i32(0),)], False),
    (factorial_mod, [(i32(10), i32(1000007)), (i32(1), i32(13))], False),
    (fib_mod, [(i32(50), i32(1000)), (i32(0), i32(7))], False),
    (smallest_prime_factor, [(i32(91),), (i32(13),)], False),
    (sum_of_prime_factors, [(i32(60),), (i32(1),)], False),
    (digital_root, [(i32(9875),), (i32(5),)], False),
    (totient, [(i32(36),), (i32(13),), (i32(1),)], False),
    (python_int_power_sum, [(i32(3),), (i32(0),)], False),
    (activity_count, [(arr(1, 3, 0, 5, 8, 5), arr(2, 4, 6, 7, 9, 9))], False),
    (can_jump, [(arr(2, 3, 1, 1, 4),), (arr(3, 2, 1, 0, 4),)], False),
    (min_jumps, [(arr(2, 3, 1, 1, 4),), (arr(1, 1, 1),)], False),
    (gas_station, [(arr(1, 2, 3, 4, 5), arr(3, 4, 5, 1, 2)), (arr(2, 3, 4), arr(3, 4, 3))], False),
    (greedy_coins, [(i32(68),), (i32(0),)], False),
    (best_stock_profit, [(arr(7, 1, 5, 3, 6, 4),), (arr(7, 6, 4),)], False),
    (all_stock_profit, [(arr(7, 1, 5, 3, 6, 4),), (arr(5, 4),)], False),
    (fractional_fill, [(arr(1.0, 2.0, 3.0, 4.0), f32(5.5)), (arr(9.0, 1.0), f32(2.0))], False),
    (assign_cookies, [(arr(1, 2, 3), arr(1, 1)), (arr(1, 2), arr(1, 2, 3))], False),
    (histogram_list, [(arr(1, 5, 2, 3, 7, 0),)], False),
    (histogram_dict, [(arr(-1, 0, 3, 4),), (arr(2, 2),)], False),
    (count_inversions, [(arr(3, 1, 2, 0),), (arr(1, 2, 3),)], False),
    (majority_vote, [(arr(2, 2, 1, 1, 1, 2, 2),), (arr(3, 3, 4),)], False),
    (count_runs, [(arr(1, 1, 2, 3, 3),), (arr(5,),)], False),
    (count_pairs_with_sum, [(arr(1, 5, 7, -1, 5), i32(6)), (arr(1, 2), i32(9))], False),
    (two_sum, [(arr(2, 7, 11, 15), i32(9)), (arr(1, 2), i32(9))], False),
    (mode_small, [(arr(1, 3, 3, 5, 1, 3),), (arr(0, 0, 5),)], False),
    (count_local_maxima, [(arr(1, 3, 2, 4, 1),), (arr(1, 2, 3),)], False),
    (count_sign_changes, [(arr(1, -2, 3, 4, -5),), (arr(1, 2),)], False),
    (distinct_sorted, [(arr(1, 1, 2, 3, 3),)], False),
    (counts_in_nested_list, [(arr(1, 2, 3, 4, 5),)], False),
    (balanced, [(arr(1, 1, -1, -1),), (arr(1, -1, -1, 1),), (arr(1, 1, -1),)], False),
    (balanced_stack, [(arr(1, 2, -2, -1),), (arr(1, -2),)], False),
    (next_greater, [(arr(4, 5, 2, 25),), (arr(3, 2, 1),)], False),
    (stock_span, [(arr(100, 80, 60, 70, 60, 75, 85),)], False),
    (rpn_eval, [(arr(2, 3, -1, 4, -2),)], False),
    (queue_two_stacks, [(arr(1, 2, 3),)], False),
    (min_stack_track, [(arr(3.0, 1.0, 2.0),)], False),
    (sliding_window_max, [(arr(1, 3, -1, -3, 5, 3, 6, 7), 3)], False),
    (stack_pop_if, [(arr(1.0), f32(1.0)), (arr(1.0), f32(-1.0))], False),
    (log_in_and, [(arr(1.0), f32(1.0)), (arr(1.0), f32(-1.0))], False),
    (transpose_in_place, [([[1, 2, 3], [4, 5, 6], [7, 8, 9]],), ([[1.0]],)], False),
    (rotate_ccw, [([[1, 2], [3, 4]],)], False),
    (spiral_sum, [(jnp.arange(12).reshape(3, 4),), (jnp.arange(4).reshape(2, 2),)], False),
    (matmul_loops, [(jnp.arange(6.0).reshape(2, 3), jnp.arange(6.0).reshape(3, 2))], False),
    (is_identity, [(jnp.eye(3, dtype=jnp.int32),), (jnp.ones((2, 2), jnp.int32),)], False),
    (set_zeros, [(jnp.array([[1, 2, 3], [4, 0, 6], [7, 8, 9]]),), (jnp.ones((2, 2), jnp.int32),)], True),
    (row_max_positions, [(jnp.array([[1, 5, 2], [7, 0, 9]]),)], False),
    (clip_rows_in_place, [([[1, 9, 3], [12, 4, 5]], 4)], False),
    (symmetric, [(jnp.array([[1, 2], [2, 1]]),), (jnp.array([[1, 2], [3, 1]]),)], False),
    (diagonal_difference, [(jnp.array([[11, 2, 4], [4, 5, 6], [10, 8, -12]]),)], False),
    (saddle_count, [(jnp.array([[1, 2], [3, 4]]),), (jnp.array([[5, 1], [2, 3]]),)], False),
    (reverse_in_place, [(arr(1, 2, 3, 4, 5),), (arr(1.0, 2.0),)], True),
    (reverse_list_in_place, [([1, 2, 3, 4],), ([5.0, 6.0, 7.0],)], False),
    (rotate_by_reversal, [(arr(1, 2, 3, 4, 5), 2), (arr(1, 2, 3), 3)], True),
    (remove_duplicates_sorted, [(arr(1, 1, 2, 3, 3),), (arr(1, 2),)], True),
    (move_zeros, [(arr(0, 1, 0, 3, 12),), (arr(1, 2),)], True),
    (dutch_flag, [(arr(2, 0, 2, 1, 1, 0),), (arr(1, 1),)], True),
    (prefix_sums_in_place, [(arr(1, 2, 3, 4),), (arr(1.5, -1.0),)], True),
    (running_max_enumerate, [(arr(1, 3, 2, 5, 4),)], True),
    (swap_pairs, [(arr(1, 2, 3, 4, 5),)], True),
    (partition_around, [(arr(5, 1, 4, 2, 3), i32(3)), (arr(1, 2), i32(0))], True),
    (halve_int_items, [(arr(8, 3, 6, 5),)], True),
    (double_list_items, [([1.0, 5.0, 2.0], f32(3.0)), ([1, 2], i32(0))], False),
    (append_squares, [([7], 4)], False),
    (dict_state_update, [({"h": jnp.zeros(3), "steps": 0}, f32(1.5)), ({"h": jnp.ones(3), "steps": 2}, f32(-1.0))],
     False),
    (alias_list_update, [(f32(2.0),), (f32(-1.0),)], False),
    (nested_counter, [(i32(4),), (i32(0),)], False),
    (flag_while_is_false, [(arr(1, 2, 0, 3),), (arr(1, 2, 3),)], False),
    (bool_ops_on_flag, [(f32(1.0),), (f32(-1.0),)], False),
    (list_ops_after_append, [(arr(1.0, 2.0, 3.0),)], False),
    (int_list_division, [(arr(9, 7, 5),)], True),
    (counter_in_default, [(f32(2.0),), (f32(-1.0),)], False),
    (bisect_insert_list, [([1, 3, 5, 7], i32(4)), ([1, 3], i32(9))], False),
    (merge_sorted, [(arr(1, 4, 6), arr(2, 3, 7))], False),
    (merge_fixed, [(arr(1, 4, 6), arr(2, 3, 7)), (arr(5, 6), arr(1, 2))], False),
    (tuple_swap_chain, [(f32(3.0), f32(1.0), f32(2.0)), (f32(1.0), f32(2.0), f32(3.0))], False),
    (float_accumulate_loop, [(f32(1.0),), (f32(-1.0),)], False),
    (early_return_in_nested, [(arr(1, 2, 3), i32(6)), (arr(1, 2, 3), i32(5))], False),
    (continue_skip_sum, [(arr(1, -2, 3, 9, 4),), (arr(-1, -2),)], False),
    (while_else_found, [(arr(4, 5, 6), i32(5)), (arr(4, 5, 6), i32(9))], False),
    (helper_returning_list, [(arr(1.0, 2.0),)], False),
    (closure_appends, [(arr(1.0, 2.0, 3.0),)], False),
    (method_mutates_self, [(arr(1.0, -2.0, 3.0),)], False),
]
