"""MAP-DP's objective E can rise between sweeps on a mixed table (issue 42, finding 7): said in
words beside the curve, with the exact joint, which the sweep lowers move by move."""
import numpy as np
import pandas as pd

from explorer import animation, runner, sources


def test_a_rising_objective_is_explained_with_the_joint_that_falls():
    d = sources.clinical_data(300, 3, 0.0, 0)
    run = runner.run(d, "MAP-DP", {"N0": 1.0}, restarts=1)
    coords, _ = sources.projection(d)
    frames = animation.animation_frames([run], coords, None, d.truth)
    info = frames.history[0]
    e, joint = info["objective"].to_numpy(), info["neg_log_joint"].to_numpy()
    assert (np.diff(e) > 0).any()  # this table's E rises at some sweep
    assert not (np.diff(joint) > 1e-9 * np.abs(joint[1:])).any()  # the joint never does
    note = animation.objective_note(info)
    assert note.startswith("MAP-DP's objective E rose at sweep") and "never rising" in note
    assert f"{joint[0]:,.1f}" in note and f"{joint[-1]:,.1f}" in note


def test_nothing_is_said_when_the_objective_only_falls():
    info = pd.DataFrame({"sweep": [1, 2, 3], "objective": [10.0, 9.0, 9.0], "neg_log_joint": [20.0, 19.0, 19.0]})
    assert animation.objective_note(info) == ""
