"""tf.config, tf.debugging and tf.device as the article uses them (each case in its own
process: the runtime is configured once per process, as TensorFlow's)."""

from conftest import run_python


def test_physical_devices_are_listed_without_starting_the_runtime():
    rc, out, err = run_python("""
        import dlrt as tf
        devices = tf.config.list_physical_devices()
        cpus = tf.config.list_physical_devices('CPU')
        print(len(devices), len(cpus), cpus[0].name, cpus[0].device_type)
        print("GPUs:", len(tf.config.list_physical_devices('GPU')))
        print("started:", tf._dlrt.runtime_started())
    """)
    assert rc == 0, err
    first, gpus, started = out.strip().splitlines()
    n, ncpu, name, kind = first.split()
    assert int(n) >= int(ncpu) >= 1
    assert name == "/physical_device:CPU:0" and kind == "CPU"
    assert gpus.startswith("GPUs: ")
    assert started == "started: False"


def test_visible_devices_are_fixed_once_the_runtime_started():
    rc, out, err = run_python("""
        import dlrt as tf
        cpus = tf.config.list_physical_devices('CPU')
        tf.config.set_visible_devices(cpus, 'CPU')
        print(tf.config.get_visible_devices('CPU') == cpus)
        print(len(tf.config.list_logical_devices('CPU')))
        try:
            tf.config.set_visible_devices(cpus, 'CPU')
        except RuntimeError as e:
            print("RuntimeError:", e)
    """)
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == "True"
    assert int(lines[1]) >= 1
    assert lines[2] == "RuntimeError: Visible devices cannot be modified after being initialized"


def test_hiding_every_gpu_leaves_the_cpu():
    rc, out, err = run_python("""
        import dlrt as tf
        tf.config.set_visible_devices([], 'GPU')
        print([d.device_type for d in tf.config.list_logical_devices()])
    """)
    assert rc == 0, err
    kinds = eval(out.strip())
    assert "CPU" in kinds and "GPU" not in kinds


def test_a_cpu_split_into_two_logical_devices():
    rc, out, err = run_python("""
        import dlrt as tf
        cpu = tf.config.list_physical_devices('CPU')[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
        print([d.name for d in tf.config.list_logical_devices('CPU')])
        try:
            tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()])
        except RuntimeError as e:
            print("RuntimeError:", e)
    """)
    assert rc == 0, err
    names, error = out.strip().splitlines()
    assert eval(names) == ["/device:CPU:0", "/device:CPU:1"]
    assert error == "RuntimeError: Virtual devices cannot be modified after being initialized"


def test_memory_growth_is_for_gpus():
    rc, out, err = run_python("""
        import dlrt as tf
        cpu = tf.config.list_physical_devices('CPU')[0]
        try:
            tf.config.experimental.set_memory_growth(cpu, True)
        except ValueError as e:
            print("ValueError:", e)
        for gpu in tf.config.list_physical_devices('GPU'):
            tf.config.experimental.set_memory_growth(gpu, True)
            assert tf.config.experimental.get_memory_growth(gpu)
        print(len(tf.config.list_logical_devices()) >= 1)
    """)
    assert rc == 0, err
    lines = out.strip().splitlines()
    assert lines[0].startswith("ValueError: Cannot set memory growth on non-GPU devices")
    assert lines[1] == "True"


def test_placement_log_and_manual_placement():
    rc, out, err = run_python("""
        import dlrt as tf
        tf.debugging.set_log_device_placement(True)
        a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        with tf.device('/CPU:0'):
            c = tf.matmul(a, b)
        print(c.numpy().tolist())
        print(c.device)
    """)
    assert rc == 0, err
    value, device = out.strip().splitlines()
    assert eval(value) == [[22.0, 28.0], [49.0, 64.0]]
    assert device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert ("Executing op matmul in device /job:localhost/replica:0/task:0/device:CPU:0 "
            "[explicit]") in err


def test_a_missing_gpu_runs_on_the_cpu_and_the_log_says_why():
    rc, out, err = run_python("""
        import dlrt as tf
        tf.config.set_visible_devices([], 'GPU')
        tf.debugging.set_log_device_placement(True)
        with tf.device('/GPU:0'):
            c = tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[3.0], [4.0]]))
        print(c.numpy().tolist(), c.device)
    """)
    assert rc == 0, err
    assert out.strip() == "[[11.0]] /job:localhost/replica:0/task:0/device:CPU:0"
    assert "[fallback:device-missing: requested /GPU:0" in err


def test_strict_placement_refuses_a_missing_device():
    rc, out, err = run_python("""
        import dlrt as tf
        tf.config.set_visible_devices([], 'GPU')
        tf.config.set_soft_device_placement(False)
        try:
            with tf.device('/GPU:0'):
                tf.add(tf.constant(1.0), 2.0)
        except tf.errors.NotFoundError as e:
            print("NotFoundError:", e)
    """)
    assert rc == 0, err
    assert out.startswith("NotFoundError: ") and "GPU:0" in out


def test_probe_prints_the_plugins_and_devices():
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "dlrt.probe"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Plugins (" in p.stdout and "Devices (" in p.stdout
    assert "/device:CPU:0" in p.stdout
    # The cpu and reference plugins of this build are loaded from its plugin folder.
    assert "libdlrt-cpu.so" in p.stdout and "loaded" in p.stdout
