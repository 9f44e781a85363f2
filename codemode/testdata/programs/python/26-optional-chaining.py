# want: Ana: Lisbon, dark theme | Dev: unknown city, light theme | user 9: unknown city, light theme
lines = []
for uid in [1, 4, 9]:
    try:
        profile = await fetch_json(url=f"https://api.example.com/users/{uid}/profile")
    except Exception:
        profile = None
    profile = profile or {}
    city = (profile.get("address") or {}).get("city", "unknown city")
    theme = (profile.get("settings") or {}).get("theme", "light")
    lines.append(f"{profile.get('name', f'user {uid}')}: {city}, {theme} theme")
print(" | ".join(lines))
