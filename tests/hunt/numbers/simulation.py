"""Small simulations and physics steps, written as textbook code (``make hunt``)."""

import math

import jax.numpy as jnp


def projectile_range(v0, angle_deg):
    g = 9.81
    theta = angle_deg * math.pi / 180
    vx = v0 * math.cos(theta)
    vy = v0 * math.sin(theta)
    x = 0.0
    y = 0.0
    dt = 0.01
    steps = 0
    while y >= 0 and steps < 10000:
        x += vx * dt
        vy -= g * dt
        y += vy * dt
        steps += 1
    return x, steps


def bouncing_ball(h0, restitution):
    bounces = 0
    h = h0
    travelled = 0
    while h > 0.01 and bounces < 50:
        travelled += 2 * h
        h = h * restitution
        bounces += 1
    return bounces, travelled - h0


def oscillator_energy(x0, v0, steps):
    k = 4.0
    dt = 0.01
    x, v = x0, v0
    for _ in range(steps):
        a = -k * x
        v = v + a * dt
        x = x + v * dt
    return 0.5 * v * v + 0.5 * k * x * x


def lcg_walk(seed, n):
    state = seed
    pos = 0
    for _ in range(n):
        state = (1103515245 * state + 12345) % 2 ** 31
        if state % 2 == 0:
            pos += 1
        else:
            pos -= 1
    return pos, state


def logistic_map(r, x0, n):
    x = x0
    for _ in range(n):
        x = r * x * (1 - x)
    return x


def lotka_volterra(prey, pred, steps):
    a, b, c, d = 1.1, 0.4, 0.4, 0.1
    dt = 0.01
    for _ in range(steps):
        dprey = a * prey - b * prey * pred
        dpred = d * prey * pred - c * pred
        prey = prey + dt * dprey
        pred = pred + dt * dpred
        if prey < 0:
            prey = prey * 0
    return prey, pred


def cooling_time(temp, ambient):
    k = 0.07
    minutes = 0
    while temp - ambient > 1 and minutes < 1000:
        temp = temp - k * (temp - ambient)
        minutes += 1
    return minutes


def decay_chain(n0, half_life_steps, steps):
    remaining = n0
    lam = math.log(2) / half_life_steps
    for _ in range(steps):
        remaining = remaining * math.exp(-lam)
    return remaining


def doubling_years(rate_percent):
    balance = 100.0
    years = 0
    while balance < 200:
        balance = balance * (1 + rate_percent / 100)
        years += 1
        if years > 500:
            return -1
    return years


def amortization_months(principal, monthly_rate, payment):
    months = 0
    while principal > 0:
        interest = principal * monthly_rate
        if payment <= interest:
            raise ValueError("payment never repays the loan")
        principal = principal + interest - payment
        months += 1
    return months


def gamblers_ruin(stake, goal, seed):
    s = seed
    rounds = 0
    while 0 < stake < goal:
        s = (s * 75 + 74) % 65537
        if s % 3 == 0:
            stake -= 1
        else:
            stake += 1
        rounds += 1
    return stake == goal, rounds


def heat_rod(temps, steps):
    alpha = 0.25
    u = temps
    for _ in range(steps):
        new = u
        for i in range(1, u.shape[0] - 1):
            new = new.at[i].set(u[i] + alpha * (u[i - 1] - 2 * u[i] + u[i + 1]))
        u = new
    return u


def rule90_bits(state, steps):
    width = 16
    mask = (1 << width) - 1
    for _ in range(steps):
        state = ((state << 1) ^ (state >> 1)) & mask
    return state


def life_count(grid, generations):
    g = grid
    n = g.shape[0]
    for _ in range(generations):
        new = jnp.zeros_like(g)
        for i in range(n):
            for j in range(n):
                alive = 0
                for di in (-1, 0, 1):
                    for dj in (-1, 0, 1):
                        if di == 0 and dj == 0:
                            continue
                        ii, jj = i + di, j + dj
                        if 0 <= ii < n and 0 <= jj < n:
                            alive = alive + g[ii, jj]
                if g[i, j] == 1 and (alive == 2 or alive == 3):
                    new = new.at[i, j].set(1)
                elif g[i, j] == 0 and alive == 3:
                    new = new.at[i, j].set(1)
        g = new
    return int(g.sum())


def verlet_spring(x0, steps):
    dt = 0.05
    x_prev = x0
    x = x0
    for _ in range(steps):
        x_next = 2 * x - x_prev - dt * dt * x
        x_prev, x = x, x_next
    return x


def orbit_steps(r0, v0):
    x, y = r0, 0.0
    vx, vy = 0.0, v0
    dt = 0.01
    t = 0
    while t < 2000:
        r3 = (x * x + y * y) ** 1.5
        vx = vx - x / r3 * dt
        vy = vy - y / r3 * dt
        x = x + vx * dt
        y = y + vy * dt
        t += 1
        if y < 0 and t > 10:
            break
    return t


def queue_sim(arrivals, service):
    waiting = 0
    served = 0
    max_wait = 0
    for a in arrivals:
        waiting += a
        done = min(waiting, service)
        waiting -= done
        served += done
        max_wait = max(max_wait, waiting)
    return served, max_wait


def sir_epidemic(beta, gamma, days):
    s, i, r = 0.99, 0.01, 0.0
    peak_day = 0
    peak = i
    for day in range(days):
        new_inf = beta * s * i
        new_rec = gamma * i
        s -= new_inf
        i += new_inf - new_rec
        r += new_rec
        if i > peak:
            peak = i
            peak_day = day
    return peak_day, peak


def capacitor_charge(tau, threshold):
    v = 0.0
    t = 0
    while v < threshold:
        v += (1 - v) / tau
        t += 1
        if t >= 10000:
            break
    return t


def pendulum_period(theta0):
    g_over_l = 9.81
    theta = theta0
    omega = 0.0
    dt = 0.001
    t = 0.0
    crossings = 0
    prev = theta
    steps = 0
    while crossings < 2 and steps < 20000:
        omega -= g_over_l * math.sin(theta) * dt
        theta += omega * dt
        t += dt
        steps += 1
        if (prev > 0) != (theta > 0):
            crossings += 1
        prev = theta
    return steps


def rocket_burn(fuel, burn):
    mass = 10 + fuel
    v = 0
    stages = 0
    while fuel > 0:
        used = min(burn, fuel)
        v += 3 * math.log(mass / (mass - used))
        mass -= used
        fuel -= used
        stages += 1
    return v, stages


def inventory(demand, reorder, lot):
    stock = lot
    orders = 0
    stockouts = 0
    for d in demand:
        if d > stock:
            stockouts += 1
            stock = 0
        else:
            stock -= d
        if stock < reorder:
            stock += lot
            orders += 1
    return orders, stockouts, stock


def elevator(requests):
    floor = 0
    travelled = 0
    for target in requests:
        travelled += abs(target - floor)
        floor = target
    return travelled, floor


def zeno_runner(gap):
    steps = 0
    while gap > 1e-3:
        gap = gap / 2
        steps += 1
    return steps


def drag_fall(mass, drag):
    v = 0.0
    dt = 0.1
    for step in range(1000):
        a = 9.81 - drag / mass * v * v
        v_new = v + a * dt
        if abs(v_new - v) < 1e-4:
            return step, v_new
        v = v_new
    return -1, v


def traffic_gaps(positions):
    gaps = []
    for i in range(len(positions) - 1):
        gaps.append(positions[i + 1] - positions[i])
    smallest = gaps[0]
    for g in gaps:
        if g < smallest:
            smallest = g
    return smallest


def tank_level(inflow, outflow, hours):
    level = 50
    overflowed = False
    for h in range(hours):
        level = level + inflow - outflow
        if level > 100:
            level = 100
            overflowed = True
        if level < 0:
            level = 0
    return level, overflowed


def damped_amplitude(gamma, cycles):
    amp = 1.0
    for _ in range(cycles):
        amp *= math.exp(-gamma)
    return amp


def random_bits_lcg(seed, count):
    x = seed
    ones = 0
    for _ in range(count):
        x = (x * 1664525 + 1013904223) % 4294967296
        ones += x >> 31
    return ones


def conveyor_time(length, speed):
    try:
        return length / speed
    except ZeroDivisionError:
        return -1.0


def spring_chain(xs, k, steps):
    x = xs
    for _ in range(steps):
        force = jnp.zeros_like(x)
        for i in range(x.shape[0]):
            left = x[i - 1] if i > 0 else 0.0
            right = x[i + 1] if i < x.shape[0] - 1 else 0.0
            force = force.at[i].set(k * (left + right - 2 * x[i]))
        x = x + 0.01 * force
    return x


def thermostat(temps, setpoint):
    heater = False
    switches = 0
    for t in temps:
        want = t < setpoint - 0.5
        if t > setpoint + 0.5:
            want = False
        elif not want:
            want = heater
        if want != heater:
            switches += 1
        heater = want
    return switches, heater


def billiard_bounces(x, vx, width, steps):
    bounces = 0
    for _ in range(steps):
        x = x + vx
        if x < 0 or x > width:
            vx = -vx
            bounces += 1
    return bounces, x


def charge_counter(pulses):
    energy = 0
    for p in pulses:
        energy += p * p * 250000
    return energy


def predator_print(steps):
    counts = [10, 3]
    for _ in range(steps):
        counts[0] += 2
        counts[1] += counts[0] // 5
    print(counts)
    return counts[1]


CASES = [
    (projectile_range, [(jnp.float32(20.0), jnp.float32(45.0)), (jnp.float32(10.0), jnp.float32(-5.0)),
                        (jnp.float32(5.0), 80.0)]),
    (bouncing_ball, [(jnp.float32(10.0), jnp.float32(0.5)), (jnp.float32(0.005), jnp.float32(0.9)),
                     (jnp.float32(1.0), jnp.float32(1.0))]),
    (oscillator_energy, [(jnp.float32(1.0), jnp.float32(0.0), 100), (jnp.float32(0.0), jnp.float32(1.0),
                                                                       jnp.int32(50)),
                         (jnp.float32(1.0), 0.0, jnp.int32(0))]),
    (lcg_walk, [(jnp.int32(42), 10), (jnp.int32(1), jnp.int32(5)), (7, jnp.int32(3)), (jnp.int32(3), 0)]),
    (logistic_map, [(jnp.float32(3.2), jnp.float32(0.5), 50), (jnp.float32(2.5), 0.1, jnp.int32(100)),
                    (jnp.float32(3.9), jnp.float32(0.2), jnp.int32(0))]),
    (lotka_volterra, [(jnp.float32(10.0), jnp.float32(5.0), 200), (jnp.float32(1.0), jnp.float32(1.0),
                                                                     jnp.int32(10))]),
    (cooling_time, [(jnp.float32(90.0), jnp.float32(20.0)), (jnp.float32(20.5), jnp.float32(20.0)),
                    (90.0, jnp.float32(25.0))]),
    (decay_chain, [(jnp.float32(1000.0), 5, 10), (jnp.float32(1000.0), jnp.float32(3.0), jnp.int32(4))]),
    (doubling_years, [(jnp.float32(7.0),), (jnp.float32(0.0),), (jnp.float32(100.0),)]),
    (amortization_months, [(jnp.float32(1000.0), jnp.float32(0.01), jnp.float32(100.0)),
                           (jnp.float32(1000.0), jnp.float32(0.2), jnp.float32(100.0)),
                           (jnp.float32(0.0), 0.01, 10.0)]),
    (gamblers_ruin, [(jnp.int32(3), jnp.int32(6), 1), (jnp.int32(0), jnp.int32(5), 2), (5, jnp.int32(10), 11)]),
    (heat_rod, [(jnp.array([0.0, 100.0, 0.0, 0.0]), 3), (jnp.array([1.0, 2.0]), 5),
                (jnp.array([0.0, 10.0, 20.0, 10.0, 0.0]), jnp.int32(2))]),
    (rule90_bits, [(jnp.int32(1 << 8), 5), (jnp.int32(0), jnp.int32(4)), (1, jnp.int32(7))]),
    (life_count, [(jnp.array([[0, 1, 0], [0, 1, 0], [0, 1, 0]]), 2), (jnp.zeros((3, 3), dtype=jnp.int32), 1)]),
    (verlet_spring, [(jnp.float32(1.0), 100), (jnp.float32(0.5), jnp.int32(0)), (2.0, jnp.int32(30))]),
    (orbit_steps, [(jnp.float32(1.0), jnp.float32(1.0)), (jnp.float32(1.0), jnp.float32(0.3))]),
    (queue_sim, [(jnp.array([3, 0, 5, 1]), 2), (jnp.zeros(0, dtype=jnp.int32), 3), ([4, 4, 4], jnp.int32(1))]),
    (sir_epidemic, [(jnp.float32(0.3), jnp.float32(0.1), 100), (jnp.float32(0.05), jnp.float32(0.1), 50),
                    (0.5, 0.1, jnp.int32(40))]),
    (capacitor_charge, [(jnp.float32(5.0), jnp.float32(0.9)), (jnp.float32(2.0), jnp.float32(0.0)),
                        (jnp.float32(10.0), 0.99)]),
    (pendulum_period, [(jnp.float32(0.2),), (jnp.float32(-1.0),)]),
    (rocket_burn, [(jnp.float32(20.0), jnp.float32(6.0)), (jnp.float32(0.0), jnp.float32(1.0)),
                   (jnp.int32(7), jnp.int32(2))]),
    (inventory, [(jnp.array([3, 5, 2, 8, 1]), 4, 10), (jnp.array([20]), 4, jnp.int32(10)),
                 (jnp.zeros(0, dtype=jnp.int32), 1, 5)]),
    (elevator, [(jnp.array([3, 1, 7]),), (jnp.zeros(0, dtype=jnp.int32),), ([2, -1, 4],)]),
    (zeno_runner, [(jnp.float32(1.0),), (jnp.float32(0.0001),), (jnp.int32(8),), (5.0,)]),
    (drag_fall, [(jnp.float32(70.0), jnp.float32(0.25)), (jnp.float32(1.0), jnp.float32(10.0))]),
    (traffic_gaps, [(jnp.array([0.0, 5.0, 7.0, 20.0]),), (jnp.array([1, 2]),), ([3, 8, 9],)]),
    (tank_level, [(jnp.int32(20), jnp.int32(5), 6), (jnp.int32(1), jnp.int32(30), jnp.int32(3)),
                  (jnp.int32(0), jnp.int32(0), 0)]),
    (damped_amplitude, [(jnp.float32(0.1), 10), (jnp.float32(0.5), jnp.int32(0)), (0.2, jnp.int32(5))]),
    (random_bits_lcg, [(jnp.int32(12345), 8), (jnp.int32(0), jnp.int32(3)), (99, jnp.int32(4))]),
    (conveyor_time, [(jnp.float32(10.0), jnp.float32(2.0)), (jnp.float32(10.0), jnp.float32(0.0)), (10, 0),
                     (jnp.int32(10), 0)]),
    (spring_chain, [(jnp.array([0.0, 1.0, 0.0]), 2.0, 3), (jnp.array([1.0]), 1.0, jnp.int32(2))]),
    (thermostat, [(jnp.array([18.0, 19.0, 21.0, 22.0, 19.0]), 20.0), (jnp.zeros(0), 20.0),
                  (jnp.array([25.0, 25.0]), jnp.float32(20.0))]),
    (billiard_bounces, [(jnp.float32(1.0), jnp.float32(3.0), 10.0, 10), (jnp.float32(5.0), 0.0, 10.0, 4),
                        (jnp.int32(0), jnp.int32(4), 9, jnp.int32(6))]),
    (charge_counter, [(jnp.array([1, 2, 3]),), (jnp.array([100, 100]),), ([50, 60, 70],)]),
    (predator_print, [(jnp.int32(3),), (jnp.int32(0),), (2,)]),
]
