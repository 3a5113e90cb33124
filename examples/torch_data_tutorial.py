"""PyTorch's "Datasets & DataLoaders" tutorial, run by funcgrad.torch.

The program is the tutorial's, written against the PyTorch API; the one line that differs
is the import (``import torch`` runs it on PyTorch itself, which the test suite does to
compare). Instead of downloading FashionMNIST, it makes a small synthetic look-alike
(28x28 grey "garments" of 10 classes): once as an in-memory dataset, and once as image
files plus a CSV of labels, read by a custom `Dataset` as the tutorial's
``CustomImageDataset`` reads its files.

    python examples/torch_data_tutorial.py
"""
import csv
import os
import tempfile

import numpy as np

import funcgrad.torch as torch

Dataset = torch.utils.data.Dataset
DataLoader = torch.utils.data.DataLoader

LABELS_MAP = {0: "T-Shirt", 1: "Trouser", 2: "Pullover", 3: "Dress", 4: "Coat",
              5: "Sandal", 6: "Shirt", 7: "Sneaker", 8: "Bag", 9: "Ankle Boot"}


def synthetic_fashion(n, seed):
    """``n`` 28x28 float32 images in [0, 1] and their labels: each class is a fixed blurry
    template (from ``seed`` 0) plus per-image noise (from ``seed``)."""
    templates = np.random.default_rng(0).uniform(0, 1, (10, 28, 28)).astype(np.float32)
    templates = (templates + np.roll(templates, 1, 1) + np.roll(templates, 1, 2)) / 3
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    noise = rng.normal(0, 0.1, (n, 28, 28)).astype(np.float32)
    return np.clip(templates[labels] + noise, 0, 1), labels


class InMemoryFashion(Dataset):
    """What ``datasets.FashionMNIST(..., transform=ToTensor())`` gives: (image of shape
    [1, 28, 28], integer label) pairs."""

    def __init__(self, n, seed, transform=None):
        self.images, self.labels = synthetic_fashion(n, seed)
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        image = torch.from_numpy(self.images[idx][None])
        if self.transform:
            image = self.transform(image)
        return image, int(self.labels[idx])


class CustomImageDataset(Dataset):
    """The tutorial's dataset of files: ``annotations_file`` is a CSV of (file name,
    label) rows, the images are files in ``img_dir`` (``.npy`` here, read with numpy
    where the tutorial uses ``read_image``)."""

    def __init__(self, annotations_file, img_dir, transform=None, target_transform=None):
        with open(annotations_file, newline="") as f:
            self.img_labels = [(name, int(label)) for name, label in csv.reader(f)]
        self.img_dir = img_dir
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        name, label = self.img_labels[idx]
        image = torch.from_numpy(np.load(os.path.join(self.img_dir, name)))
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


def write_image_folder(directory, n, seed):
    """Image files and their ``labels.csv``, as the tutorial's ``img_dir`` holds them."""
    images, labels = synthetic_fashion(n, seed)
    rows = []
    for i, (image, label) in enumerate(zip(images, labels)):
        name = f"{LABELS_MAP[int(label)].lower().replace(' ', '')}{i}.npy"
        np.save(os.path.join(directory, name), (image * 255).astype(np.uint8)[None])
        rows.append((name, int(label)))
    path = os.path.join(directory, "labels.csv")
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return path


def main():
    torch.manual_seed(0)
    training_data = InMemoryFashion(600, seed=1)
    test_data = InMemoryFashion(100, seed=2)

    # Iterating the dataset: index it like a list
    for _ in range(3):
        sample_idx = torch.randint(len(training_data), size=(1,)).item()
        img, label = training_data[sample_idx]
        print(f"sample {sample_idx}: {LABELS_MAP[label]}, image {tuple(img.shape)}")

    # Preparing the data for training with DataLoaders
    train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True)
    test_dataloader = DataLoader(test_data, batch_size=64, shuffle=True)
    train_features, train_labels = next(iter(train_dataloader))
    print(f"Feature batch shape: {train_features.size()}")
    print(f"Labels batch shape: {train_labels.size()}")
    img = train_features[0].squeeze()
    print(f"First image {tuple(img.shape)}, label: {train_labels[0]}")
    print(f"{len(train_dataloader)} training batches, {len(test_dataloader)} test batches")
    seen = sorted(i for _, labels in train_dataloader for i in labels.tolist())
    print(f"One epoch sees every sample once: {len(seen) == len(training_data)}")

    # A custom Dataset for your files
    with tempfile.TemporaryDirectory() as img_dir:
        annotations = write_image_folder(img_dir, 20, seed=3)
        files = CustomImageDataset(annotations, img_dir,
                                   transform=lambda x: x.float() / 255,
                                   target_transform=lambda y: torch.tensor(y))
        loader = DataLoader(files, batch_size=8, shuffle=True)
        features, labels = next(iter(loader))
        print(f"From files: {features.size()} {features.dtype}, labels {labels.dtype}, "
              f"{len(loader)} batches")


if __name__ == "__main__":
    main()
