"""A physics simulation that learns: the 2-D heat equation, written with eager tensors, and its
two physical constants recovered from noisy observations by gradient descent through the whole
simulation (GradientTape).

The plate: a 32x32 grid, its edges held at 0, heat diffusing with diffusivity alpha and
leaking to the air at rate k:

    du/dt = alpha * laplacian(u) - k * u

stepped by explicit Euler (dt = 0.2 in grid units; alpha * dt < 1/4 keeps it stable). The
"experiment" runs the simulation with alpha = 0.8, k = 0.05 from two hot spots and records the
plate every 10 steps, with noise. The fit starts from alpha = 0.2, k = 0 and minimises the
squared difference between its simulated records and the observed ones; every iteration runs
the 40 steps forward on the tape and back through them.

    python examples/heat_equation.py [--iterations 150] [--device /CPU:0]

Prints the recovered constants against the true ones (the stated quality: both within 5%).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import dlrt as tf

TRUE_ALPHA, TRUE_K = 0.8, 0.05
STEPS, RECORD_EVERY, DT, N = 40, 10, 0.2, 32


def initial_plate() -> np.ndarray:
    x = np.linspace(-1.0, 1.0, N, dtype=np.float32)
    spot = lambda cx, cy: np.exp(-((x[:, None] - cx) ** 2 + (x[None, :] - cy) ** 2) / 0.03)  # noqa: E731
    return (spot(0.3, -0.2) + 0.6 * spot(-0.4, 0.4)).astype(np.float32)


def simulate(u: tf.Tensor, alpha, k) -> list[tf.Tensor]:
    """The plate every RECORD_EVERY steps. alpha and k may be Python numbers or Variables."""
    records = []
    for step in range(1, STEPS + 1):
        centre = u[1:-1, 1:-1]
        laplacian = u[1:-1, 2:] + u[1:-1, :-2] + u[2:, 1:-1] + u[:-2, 1:-1] - 4.0 * centre
        centre = centre + DT * (alpha * laplacian - k * centre)
        u = tf.pad(centre, [[1, 1], [1, 1]])  # the edges stay at 0
        if step % RECORD_EVERY == 0:
            records.append(u)
    return records


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=150)
    ap.add_argument("--device", default="/CPU:0", help="where the simulation runs (/GPU:0 too)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    iterations = a.iterations
    rng = np.random.default_rng(a.seed)
    with tf.device(a.device):
        u0 = tf.constant(initial_plate())
        observed = [r.numpy() + rng.normal(0.0, 0.002, r.shape).astype(np.float32)
                    for r in simulate(u0, TRUE_ALPHA, TRUE_K)]
        alpha, k = tf.Variable(0.2, name="alpha"), tf.Variable(0.0, name="k")
        optimizer = tf.keras.optimizers.Adam(0.03)
        for it in range(iterations):
            with tf.GradientTape() as tape:
                records = simulate(u0, alpha, k)
                loss = tf.add_n([tf.reduce_mean((r - o) ** 2) for r, o in zip(records, observed)])
            optimizer.apply_gradients(zip(tape.gradient(loss, [alpha, k]), [alpha, k]))
            if it % 25 == 0 or it == iterations - 1:
                print(f"iteration {it:3d}: loss {float(loss):.3e}, alpha {float(alpha):.4f}, "
                      f"k {float(k):.4f}")
    ea = abs(float(alpha) - TRUE_ALPHA) / TRUE_ALPHA
    ek = abs(float(k) - TRUE_K) / TRUE_K
    print(f"heat equation, {iterations} iterations through {STEPS} steps on {records[0].device}: "
          f"alpha {float(alpha):.4f} (true {TRUE_ALPHA}, error {100 * ea:.1f}%), "
          f"k {float(k):.4f} (true {TRUE_K}, error {100 * ek:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
