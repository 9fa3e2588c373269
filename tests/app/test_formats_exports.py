"""The Subtypes page's animated figure download (issue 27): a title and a one-line caption that say
what it shows (data, algorithm, settings), the data's name escaped. Headless (AppTest)."""
import html

from apptools import ok, start


def test_the_subtypes_figure_download_has_a_title_and_a_caption(monkeypatch):
    from streamlit.runtime.media_file_manager import MediaFileManager

    deferred = {}  # AppTest's runtime lives only while a script runs: keep what the buttons register
    register = MediaFileManager.add_deferred

    def recording(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        file_id = register(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)
        deferred[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", recording)
    at = start(240)
    at.switch_page("pages/subtypes.py").run()
    ok(at)
    name = at.session_state["data"].name
    button = next(b for b in at.get("download_button") if b.proto.id and "download_figure" in b.proto.id)
    document = deferred[button.proto.deferred_file_id]().decode()
    assert f"<title>MAP-DP clusters of {html.escape(name)}</title>" in document
    caption = document.split('<p class="caption">', 1)[1].split("</p>", 1)[0]
    assert caption.startswith(html.escape(name)) and "MAP-DP, N0 = " in caption and "restart" in caption
    assert "e+0" not in caption
    assert "Plotly.newPlot" in document and "updatemenus" in document  # the file plays by itself
