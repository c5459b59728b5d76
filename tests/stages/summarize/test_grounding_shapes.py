"""Grounding of what recaps of agent sessions state as exact beyond Unix paths and quoted
commands: Windows paths and ``@`` names."""

from __future__ import annotations

import pytest

from harkback.stages.summarize.grounding import unquoted

WINDOWS = ("[USER]: the build script fails on my laptop\n\n[ASSISTANT]: Run "
           "`C:\\Users\\me\\proj\\run.ps1` then `.\\scripts\\build.bat`; the backup goes to "
           "\\\\nas01\\share\\backups.\n\n[TOOL:powershell]: {\"path\": "
           "\"C:\\\\Users\\\\me\\\\proj\\\\out\\\\app.exe\"}")


@pytest.mark.parametrize(("invented", "held"), [
    ("C:\\Users\\me\\proj\\deploy.ps1", "C:\\Users\\me\\proj\\run.ps1"),
    ("`C:\\Users\\me\\proj`", "`C:\\Users\\me\\proj\\run.ps1`"),
    ("D:\\proj\\run.ps1", "c:\\users\\me\\proj\\run.ps1"),
    (".\\scripts\\deploy.bat", ".\\scripts\\build.bat"),
    ("\\\\nas01\\share\\old", "\\\\nas01\\share\\backups"),
    ("C:\\Users\\me\\proj\\out\\app.dll", "C:\\Users\\me\\proj\\out\\app.exe")])
def test_a_windows_path_the_session_never_named_is_not_held(invented: str, held: str) -> None:
    """A Windows path (drive, ``.\\``, UNC) is checked as a Unix one is: one the session never
    named, or the start of one it did, is reported; the one it named passes, as does a
    path a tool printed in JSON with doubled backslashes."""
    assert unquoted(f"The user ran {invented} after the fix.", WINDOWS) != ()
    assert unquoted(f"The user ran {held} after the fix.", WINDOWS) == ()


@pytest.mark.parametrize("quoted", [
    "`C:/Users/me/proj/run.ps1`", "C:/Users/me/proj/run.ps1", "`./scripts/build.bat`",
    "`C:\\\\Users\\\\me\\\\proj\\\\run.ps1`", "`//nas01/share/backups`"])
def test_a_windows_path_written_with_other_slashes_is_held(quoted: str) -> None:
    """The session's path with forward slashes (or JSON's doubled backslashes) is the same
    path: quoting it so is grounded, where it was refused."""
    assert unquoted(f"Fixed by {quoted}.", WINDOWS) == ()


NPM = ("[USER]: the tests need an older lodash\n\n[ASSISTANT]: `npm install lodash@4.17.20` "
       "then `ssh deploy@prod.example.com`; types from @types/node@20.11.0.")


def test_a_package_named_without_its_version_is_held_and_a_user_without_host_is_not() -> None:
    """`lodash` is the package the session installed as lodash@4.17.20 (it was refused);
    `deploy` is not the session's deploy@prod.example.com, a user on another host."""
    assert unquoted("Installed `lodash` and `npm install lodash`.", NPM) == ()
    assert unquoted("Logged in with `ssh deploy`.", NPM) == ("ssh deploy",)
