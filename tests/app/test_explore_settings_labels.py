"""Explore's narrow settings column at 1280 px (issue 43's screenshots): the priors on partitions are
named in a few words, each on one line, so that every radio button sits beside its own label; the
long "mixture of finite mixtures (Miller & Harrison 2018)" wrapped, its button between two lines.
The sources stay in the radio's help."""
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import ok as _ok
from explorer import sources


def test_the_priors_on_partitions_have_short_labels_and_their_sources_in_the_help():
    at = AppTest.from_file(APP, default_timeout=240)
    at.session_state["data"] = sources.scenario_data("5.2", n=300, seed=0)
    at.run()
    _ok(at)
    radio = at.radio(key="w_partition")
    assert radio.options == ["Dirichlet process (N0)", "Mixture of finite mixtures"]
    assert all(len(label) <= 26 for label in radio.options)  # one line in the column at 1280 x 720
    assert "Miller & Harrison 2018" in radio.help and "Dirichlet process" in radio.help
