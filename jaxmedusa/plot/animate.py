"""The plan view animated: a GIF (imageio's Pillow writer) or an MP4 (needs imageio-ffmpeg).

    path = animate_run(load_run("results/offset"), "offset.gif", speed=0.5, fps=20)

Frame k shows the run at simulated time t_k = k * speed / fps (speed 1 = real time,
0.5 = half speed), the last frame at the end of the run: each vehicle's outline at the last
saved sample at or before t_k, its path so far, and the contacts that began by then.
The axes limits are the whole run's, so the picture does not jump.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from jaxmedusa.plot.plan_view import draw_plan, frame_velocity
from jaxmedusa.plot.run_data import RunData

MAX_FRAMES = 3000  # a guard against --speed 0.001 rendering for hours


class AnimationError(RuntimeError):
    """A request the writer cannot serve (unknown suffix, mp4 without imageio-ffmpeg, too many frames)."""


def frame_times(t_end: float, speed: float, fps: float) -> np.ndarray:
    """Simulated times [s] of the frames: every speed/fps seconds from 0, and t_end last."""
    if not (speed > 0 and fps > 0):
        raise AnimationError(f"speed and fps must be positive, got speed={speed}, fps={fps}")
    step = speed / fps
    n = int(np.floor(t_end / step + 1e-9))
    times = np.arange(n + 1) * step
    if t_end - times[-1] > 1e-9:
        times = np.append(times, t_end)
    if len(times) > MAX_FRAMES:
        raise AnimationError(f"{len(times)} frames (more than {MAX_FRAMES}): raise --speed or lower --fps")
    return times


def _writer(path: Path, fps: float):
    suffix = path.suffix.lower()
    if suffix == ".gif":
        return imageio.get_writer(path, mode="I", duration=1000.0 / fps, loop=0)  # duration per frame [ms]
    if suffix == ".mp4":
        if importlib.util.find_spec("imageio_ffmpeg") is None:
            raise AnimationError("writing .mp4 needs the imageio-ffmpeg package: pip install imageio-ffmpeg "
                                 "(or pip install 'jaxmedusa[video]'); .gif works without it")
        return imageio.get_writer(path, fps=fps, codec="libx264", quality=7, macro_block_size=8)
    raise AnimationError(f"{path}: the animation file must end in .gif or .mp4")


def render_frames(run: RunData, times, width: float = 9.0, dpi: int = 80, moving: bool = False):
    """Yield one RGB frame (H, W, 3) uint8 per time in `times`; `width` [in], the height
    follows the run's extent (equal scales); `moving`: in plan_view's moving frame."""
    u = frame_velocity(run) if moving else None
    probe = Figure()
    draw_plan(probe.add_subplot(), run, moving=u)  # the whole run once, for fixed limits
    limits = (*probe.axes[0].get_xlim(), *probe.axes[0].get_ylim())
    aspect = (limits[3] - limits[2]) / max(limits[1] - limits[0], 1e-9)
    fig = Figure(figsize=(width, float(np.clip(width * aspect, 1.2, 7.0)) + 1.0), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for t in times:
        ax.clear()
        draw_plan(ax, run, t_max=float(t), fade=False, limits=limits, moving=u)
        ax.set_title(f"{run.name}   t = {t:6.2f} s")
        fig.canvas.draw()
        yield np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def animate_run(run: RunData, out: str | Path, speed: float = 1.0, fps: float = 20.0, progress=None,
                dpi: int = 80, moving: bool = False) -> Path:
    """Write the animation to `out` (.gif or .mp4). `progress(done, total)` after each frame."""
    out = Path(out)
    times = frame_times(float(run.trajectory["time"].max()), speed, fps)
    writer = _writer(out, fps)  # fails before any rendering
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        for k, frame in enumerate(render_frames(run, times, dpi=dpi, moving=moving)):
            writer.append_data(frame)
            if progress is not None:
                progress(k + 1, len(times))
    finally:
        writer.close()
    return out
