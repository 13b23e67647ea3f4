import pytest
from django.contrib.auth import get_user_model


def _signup(client, email, password1, password2=None):
    return client.post(
        "/accounts/signup/", {"email": email, "password1": password1, "password2": password2 or password1}
    )


def test_a_person_signs_up_with_email_and_password_and_is_logged_in(client, db, mailoutbox):
    response = _signup(client, "dana@example.org", "a-Long-pass-phrase-9")
    assert response.status_code == 302
    assert get_user_model().objects.filter(email="dana@example.org").exists()
    assert client.get("/team/").status_code == 200
    # Email verification is optional by default; the mail goes to the configured (console) backend.
    assert mailoutbox and mailoutbox[0].to == ["dana@example.org"]


@pytest.mark.parametrize(
    ("email", "password1", "password2", "message"),
    [
        ("not-an-email", "a-Long-pass-phrase-9", None, "Enter a valid email address."),
        ("erin@example.org", "short", None, "This password is too short."),
        ("erin@example.org", "a-Long-pass-phrase-9", "different-pass-9", "You must type the same password each time."),
        ("erin@example.org", "12345678901", None, "This password is entirely numeric."),
    ],
)
def test_bad_signup_data_gets_a_clear_message_and_creates_nobody(client, db, email, password1, password2, message):
    response = _signup(client, email, password1, password2)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert get_user_model().objects.count() == 0


def test_an_email_already_in_use_is_refused(client, alice):
    response = _signup(client, "ALICE@example.org", "a-Long-pass-phrase-9")
    assert response.status_code == 200
    assert "A user is already registered with this email address." in response.content.decode()
    assert get_user_model().objects.count() == 1
