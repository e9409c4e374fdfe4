"""The article's listings, verbatim but for `import dlrt as tf` and the data set line, each
in its own process (each configures devices before the runtime starts). They must run and,
where they train, learn."""

import pytest

from conftest import have_fashion_mnist, run_python


def check(code: str, timeout: float = 600) -> str:
    rc, out, err = run_python(code, timeout=timeout)
    assert rc == 0, f"exit {rc}\nstdout:\n{out}\nstderr:\n{err}"
    return out + err


def test_listing_devices():
    out = check("""
        import dlrt as tf
        print("Num GPUs Available: ", len(tf.config.list_physical_devices('GPU')))
        print(tf.config.list_physical_devices())
    """)
    assert "Num GPUs Available: " in out and "PhysicalDevice(name='/physical_device:CPU:0'" in out


def test_logging_device_placement():
    out = check("""
        import dlrt as tf
        tf.debugging.set_log_device_placement(True)

        # Create some tensors
        a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        c = tf.matmul(a, b)

        print(c)
    """)
    assert "Executing op matmul in device /job:localhost/replica:0/task:0/device:" in out
    assert "[[22. 28.]\n [49. 64.]]" in out


def test_manual_device_placement():
    out = check("""
        import dlrt as tf
        tf.debugging.set_log_device_placement(True)

        # Place tensors on the CPU
        with tf.device('/CPU:0'):
          a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
          b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

        # Run on the GPU
        c = tf.matmul(a, b)
        print(c)
    """)
    assert "[[22. 28.]\n [49. 64.]]" in out


def test_limiting_gpu_memory_growth_and_visible_devices():
    out = check("""
        import dlrt as tf
        gpus = tf.config.list_physical_devices('GPU')
        if gpus:
          try:
            # Currently, memory growth needs to be the same across GPUs
            for gpu in gpus:
              tf.config.experimental.set_memory_growth(gpu, True)
            logical_gpus = tf.config.list_logical_devices('GPU')
            print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
          except RuntimeError as e:
            # Memory growth must be set before GPUs have been initialized
            print(e)

        gpus = tf.config.list_physical_devices('GPU')
        if gpus:
          # Restrict TensorFlow to only use the first GPU
          try:
            tf.config.set_visible_devices(gpus[0], 'GPU')
            logical_gpus = tf.config.list_logical_devices('GPU')
            print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPU")
          except RuntimeError as e:
            # Visible devices must be set before GPUs have been initialized
            print(e)
        print("done")
    """)
    assert "done" in out


def test_soft_placement_on_a_missing_gpu():
    out = check("""
        import dlrt as tf
        tf.config.set_soft_device_placement(True)
        tf.debugging.set_log_device_placement(True)

        # Creates some tensors
        a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        with tf.device('/device:GPU:2'):
          c = tf.matmul(a, b)

        print(c)
    """)
    assert "[[22. 28.]\n [49. 64.]]" in out
    assert "fallback:device-missing: requested /device:GPU:2" in out


@pytest.mark.skipif(not have_fashion_mnist(), reason="needs dataset-fashion-mnist")
def test_the_cnn_on_the_cpu():
    out = check("""
        import dlrt as tf
        from dlrt.keras import datasets, layers, models

        (train_images, train_labels), (test_images, test_labels) = datasets.fashion_mnist.load_data()
        train_images = train_images.reshape((-1, 28, 28, 1)) / 255.0
        test_images = test_images.reshape((-1, 28, 28, 1)) / 255.0

        with tf.device('/CPU:0'):
            model = models.Sequential()
            model.add(layers.Conv2D(32, (3, 3), activation='relu', input_shape=(28, 28, 1)))
            model.add(layers.MaxPooling2D((2, 2)))
            model.add(layers.Conv2D(64, (3, 3), activation='relu'))
            model.add(layers.MaxPooling2D((2, 2)))
            model.add(layers.Conv2D(64, (3, 3), activation='relu'))
            model.add(layers.Flatten())
            model.add(layers.Dense(64, activation='relu'))
            model.add(layers.Dense(10))

            model.compile(optimizer='adam',
                          loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          metrics=['accuracy'])

            history = model.fit(train_images, train_labels, epochs=1,
                                validation_data=(test_images, test_labels), verbose=2)
        model.summary()
        test_loss, test_acc = model.evaluate(test_images, test_labels, verbose=2)
        print("test_acc", test_acc)
    """)
    assert "Total params: 93,322" in out
    acc = float(out.split("test_acc")[1].split()[0])
    assert acc > 0.8  # one epoch of the 60,000 images: 0.86 measured


@pytest.mark.skipif(not have_fashion_mnist(), reason="needs dataset-fashion-mnist")
def test_mirrored_strategy_on_two_logical_cpus():
    out = check("""
        import dlrt as tf
        cpu = tf.config.list_physical_devices('CPU')[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])

        strategy = tf.distribute.MirroredStrategy()
        print('Number of devices: {}'.format(strategy.num_replicas_in_sync))

        (x, y), _ = tf.keras.datasets.fashion_mnist.load_data()
        x = x[:4096].reshape(-1, 28, 28, 1) / 255.0
        y = y[:4096]
        with strategy.scope():
          model = tf.keras.Sequential([
              tf.keras.layers.Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)),
              tf.keras.layers.MaxPooling2D(),
              tf.keras.layers.Flatten(),
              tf.keras.layers.Dense(64, activation='relu'),
              tf.keras.layers.Dense(10)
          ])
          model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        optimizer=tf.keras.optimizers.Adam(),
                        metrics=['accuracy'])
        history = model.fit(x, y, batch_size=64 * strategy.num_replicas_in_sync, epochs=2, verbose=0)
        print("losses", history.history["loss"])
    """)
    assert "Number of devices: 2" in out
    losses = eval(out.split("losses")[1].strip().splitlines()[0])
    assert losses[1] < losses[0]
