"""Reproducer for decord-cannot-decode.

`python repro.py`: a video dataset of 6 clips (8 frames each, written losslessly with FFV1
by OpenCV) is copied from its source, and the download of one clip saved only its audio
track: the file opens, but holds no video stream, as a downloader leaves it when the video
format was not available. A Dataset decodes each clip with `decord.VideoReader`, which
raises `decord._ffi.base.DECORDError: ... Check failed: st_nb >= 0 (... vs. 0) ERROR
cannot find video stream with wanted index: -1` for that clip.
`python repro.py --fixed`: before training, a check pass opens every clip with decord,
lists the ones that fail and copies them again from the source. Every clip then decodes,
and each frame equals the pixels it was written from.
"""

import os
import shutil
import sys
import tempfile
import wave

import cv2
import decord
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv[1:]
CLIPS, FRAMES = 6, 8


class ClipFolder(Dataset):
    def __init__(self, root: str):
        self.files = sorted(os.path.join(root, name) for name in os.listdir(root))

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> torch.Tensor:
        reader = decord.VideoReader(self.files[index])
        return torch.from_numpy(reader.get_batch(list(range(len(reader)))).asnumpy())


def write_clip(path: str, frames: np.ndarray) -> None:
    """Write RGB frames losslessly (FFV1), so a correct decode gives them back exactly."""
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"FFV1"), 10, (64, 48))
    for frame in frames:
        writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
    writer.release()


def write_audio_only(path: str) -> None:
    """What the failed download left: one second of audio and no video stream."""
    with wave.open(path, "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(2)
        audio.setframerate(8000)
        audio.writeframes(bytes(16000))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as work:
        source, data = os.path.join(work, "source"), os.path.join(work, "data")
        os.makedirs(source)
        generator = np.random.default_rng(0)
        clips = generator.integers(0, 256, (CLIPS, FRAMES, 48, 64, 3), dtype=np.uint8)
        for i, frames in enumerate(clips):
            write_clip(os.path.join(source, f"clip{i:02d}.avi"), frames)
        shutil.copytree(source, data)
        write_audio_only(os.path.join(data, "clip03.avi"))  # the download that kept only audio

        if FIXED:
# --- fix: start
            # Check pass: open every clip with decord and copy the ones that fail again
            # from the dataset's source (download them again).
            for path in ClipFolder(data).files:
                try:
                    decord.VideoReader(path)
                except (decord.DECORDError, RuntimeError) as error:
                    print(f"unreadable: {os.path.basename(path)} ({type(error).__name__}); copying it again")
                    shutil.copyfile(os.path.join(source, os.path.basename(path)), path)
# --- fix: end

        loader = DataLoader(ClipFolder(data), batch_size=2, num_workers=0)
        videos = torch.cat(list(loader))
        print("decoded clips:", tuple(videos.shape))

        # --- check: start
        assert len(videos) == CLIPS  # every clip, none skipped
        assert torch.equal(videos, torch.from_numpy(clips))  # every frame as it was written
        print(f"check: all {CLIPS} clips decode, and each of their {FRAMES} frames equals the pixels written")
        # --- check: end
